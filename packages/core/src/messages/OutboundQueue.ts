import type { Backlog } from "../observability/Backlog.ts"
import { Context, type Effect, type Redacted, type Scope } from "effect"
import type { ChannelError } from "../channels/Channel.ts"
import type { Message } from "./Message.ts"

/** A queued outbound message a sender holds under a lease, with what sending it needs. */
export interface ClaimedMessage {
  readonly accountId: string
  readonly message: Message
  readonly channel: {
    readonly phoneNumberId: string
    readonly accessToken: Redacted.Redacted<string>
    readonly active: boolean
  }
  /** The conversation's `contact_wa_id`, else the lead's phone without "+". */
  readonly to: string
  /** The attempt this claim is for: sends begun before it, plus one. */
  readonly attempts: number
  /**
   * An earlier claim began a send whose outcome was never recorded (its sender died):
   * the provider may have it, so it must not be sent again.
   */
  readonly interrupted: boolean
}

/**
 * The sender's side of the outbound messages (docs/contract-messaging.md §7.1): due queued messages,
 * replies before campaign traffic, each under a lease so two senders never hold one. Each send
 * is recorded as begun (`beginSend`, committed) before the provider is called.
 */
export class OutboundQueue extends Context.Service<
  OutboundQueue,
  {
    readonly claim: (
      worker: string,
      now: number,
      leaseMillis: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ClaimedMessage>>
    /**
     * Records that these sends are beginning, committed before any is made: the ids still this
     * worker's. One whose lease was lost meanwhile (another sender may have it) is left out and
     * must not be sent.
     */
    readonly beginSend: (
      worker: string,
      messages: ReadonlyArray<{ readonly accountId: string; readonly id: string }>,
      now: number
    ) => Effect.Effect<ReadonlySet<string>>
    /** The provider refused the channel's credentials: recorded as the channel's `last_error`. */
    readonly channelRefused: (accountId: string, channelId: string, error: ChannelError) => Effect.Effect<void>
    /** Back in the queue, not before `notBefore` (epoch ms): the provider certainly did not take it. */
    readonly retryLater: (accountId: string, id: string, notBefore: number) => Effect.Effect<void>
    /**
     * Holds a channel's queued campaign messages not begun yet until `until` (epoch ms; Infinity:
     * until released), or releases them (`until` null: due again now, or at their `scheduled_at`),
     * with the caller's transaction. Replies and other messages are not held (§8.2, "paused").
     */
    readonly holdCampaigns: (
      accountId: string,
      channelId: string,
      until: number | null,
      now: number
    ) => Effect.Effect<void>
    /** The queued messages due at `now` (epoch ms), for the operator's gauges. */
    readonly backlog: (now: number) => Effect.Effect<Backlog>
    /** Signals queued messages (an effect that waits for the next signal); senders also poll. */
    readonly wakeups: Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  }
>()("core/OutboundQueue") {}

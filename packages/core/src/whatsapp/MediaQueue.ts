import { Context, type Effect, type Redacted, type Scope } from "effect"
import type { InboundMedia, Message } from "../messages/Message.ts"

/** An inbound message whose file a fetcher holds under a lease, with what fetching it needs. */
export interface ClaimedMedia {
  readonly accountId: string
  readonly messageId: string
  /** WhatsApp's type: image, audio, video, document or sticker. */
  readonly type: string
  readonly media: InboundMedia
  readonly channel: { readonly phoneNumberId: string; readonly accessToken: Redacted.Redacted<string> }
  /** The attempt this claim is for: claims before it, plus one. */
  readonly attempts: number
}

/**
 * The files waiting to be fetched (docs/contract-messaging.md §5.8). A message is enqueued in
 * the transaction that stores it; a fetcher claims it under a lease (on SQL, `FOR UPDATE SKIP
 * LOCKED`), so two fetchers never hold one, and one that dies leaves it to the next after the
 * lease. `finish` writes the message's media and takes it off the queue in one step.
 */
export class MediaQueue extends Context.Service<
  MediaQueue,
  {
    /** In the caller's transaction; wakes the fetchers at its commit where the store can. */
    readonly enqueue: (accountId: string, messages: ReadonlyArray<Message>, now: number) => Effect.Effect<void>
    readonly claim: (
      worker: string,
      now: number,
      leaseMillis: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ClaimedMedia>>
    /** Back in the queue, not before `notBefore` (epoch ms). */
    readonly retryLater: (accountId: string, messageId: string, notBefore: number) => Effect.Effect<void>
    /** The message's media as it ends (`stored` or `failed`), and off the queue. */
    readonly finish: (accountId: string, messageId: string, media: InboundMedia, now: string) => Effect.Effect<void>
    /** Signals enqueued files (an effect that waits for the next signal); fetchers also poll. */
    readonly wakeups: Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  }
>()("core/MediaQueue") {}

import { Context, type Effect } from "effect"
import type { Bounds } from "../metrics/Calendar.ts"
import type { Listed, Page } from "../Pagination.ts"
import type { Message } from "./Message.ts"
import type { OutboundStatus } from "./StatusMerge.ts"

/** The messages analytics counts (`MessagesRepo.createdPerBucket`). */
export type Counted = "inbound" | "outbound" | "outbound_by_agent"

/** Message storage, scoped to one account. `(channel_id, external_id)` is unique: WhatsApp's redeliveries are found. */
export class MessagesRepo extends Context.Service<
  MessagesRepo,
  {
    /** A conversation's messages, newest first (`created_at` desc, then `id` desc). */
    readonly list: (
      accountId: string,
      conversationId: string,
      page: Page,
      /** Only messages older than this one (`created_at`, then `id`), so new ones do not shift the pages. */
      before?: Message | undefined
    ) => Effect.Effect<Listed<Message>>
    readonly find: (accountId: string, id: string) => Effect.Effect<Message | undefined>
    /** The conversation's newest inbound message (`created_at`, then `id`), if the lead ever wrote. */
    readonly latestInbound: (accountId: string, conversationId: string) => Effect.Effect<Message | undefined>
    /** Sets an inbound message's `read_at` unless it has one; the message as it is now. */
    readonly markRead: (accountId: string, id: string, at: string) => Effect.Effect<Message | undefined>
    /**
     * How many messages of a kind were created in each bucket: `inbound`; `outbound` that are not
     * `failed` or `cancelled` (as metering counts them); of those, the ones an agent sent.
     */
    readonly createdPerBucket: (
      accountId: string,
      kind: Counted,
      bounds: Bounds
    ) => Effect.Effect<ReadonlyArray<number>>
    /** Stores inbound messages: the ids of those stored, leaving out any whose `external_id` is on its channel already. */
    readonly insertInbound: (accountId: string, messages: ReadonlyArray<Message>) => Effect.Effect<ReadonlySet<string>>
    /** The messages among `ids`, locked for the caller's transaction where the store can lock (in id order). */
    readonly findForUpdate: (accountId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Message>>
    /** Our ids of the channel's messages with these WhatsApp ids: external id → message id. */
    readonly idsByExternalId: (
      accountId: string,
      channelId: string,
      externalIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, string>>
    /** Writes merged delivery states (status, error, times, `external_id` once known). */
    readonly saveDeliveries: (accountId: string, messages: ReadonlyArray<Message>) => Effect.Effect<void>
    /** Deletes a lead's messages, returning them as they were. */
    readonly removeForLead: (accountId: string, leadId: string) => Effect.Effect<ReadonlyArray<Message>>
    /** Stores queued outbound messages for the sender (and wakes it where the store can). */
    readonly insertOutbound: (accountId: string, messages: ReadonlyArray<Message>) => Effect.Effect<void>
    /**
     * Cancels a campaign's queued messages that no sender has begun to send (a claimed one not yet
     * begun is cancelled too: its send will not begin); returns them as they are now.
     */
    readonly cancelQueued: (accountId: string, campaignId: string, now: string) => Effect.Effect<ReadonlyArray<Message>>
    /** Each campaign's messages counted by status. */
    readonly countsByCampaign: (
      accountId: string,
      campaignIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, Partial<Record<OutboundStatus, number>>>>
    /** The campaigns among `campaignIds` that still have a queued message. */
    readonly campaignsWithQueued: (
      accountId: string,
      campaignIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlySet<string>>
  }
>()("core/MessagesRepo") {}

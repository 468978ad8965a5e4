import { Context, type Effect } from "effect"
import type { Page, Slice } from "../Pagination.ts"
import type { Message } from "./Message.ts"

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
    ) => Effect.Effect<Slice<Message>>
    readonly find: (accountId: string, id: string) => Effect.Effect<Message | undefined>
    /** Stores an inbound message; false when one with its `external_id` is on the channel already. */
    readonly insertInbound: (accountId: string, message: Message) => Effect.Effect<boolean>
    /** The message, locked for the caller's transaction where the store can lock. */
    readonly findForUpdate: (accountId: string, id: string) => Effect.Effect<Message | undefined>
    /** An outbound message by WhatsApp's id on a channel. */
    readonly findByExternalId: (
      accountId: string,
      channelId: string,
      externalId: string
    ) => Effect.Effect<Message | undefined>
    /** Writes a merged delivery state (status, error, times, `external_id` once known). */
    readonly saveDelivery: (accountId: string, message: Message) => Effect.Effect<void>
    /** Deletes a lead's messages, returning them as they were. */
    readonly removeForLead: (accountId: string, leadId: string) => Effect.Effect<ReadonlyArray<Message>>
    /** Stores a queued outbound message for the sender (and wakes it where the store can). */
    readonly insertOutbound: (accountId: string, message: Message) => Effect.Effect<void>
  }
>()("core/MessagesRepo") {}

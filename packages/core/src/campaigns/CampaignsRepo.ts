import { Context, type Effect } from "effect"
import type { Conversation } from "../conversations/Conversation.ts"
import type { Message } from "../messages/Message.ts"
import type { Listed, Page } from "../Pagination.ts"
import type { Campaign } from "./Campaign.ts"
import type { Recipient, RecipientStatus, Snapshot } from "./Recipient.ts"

/**
 * A campaign as stored: the wire object without what is read fresh each time (`audience_count`,
 * `stats`), and the number of recipients snapshotted at queue time (0 for a draft).
 */
export type StoredCampaign = Omit<Campaign, "audience_count" | "stats" | "paused"> & { readonly total: number }

/** One recipient of a campaign being queued: who it was, and its message unless it was skipped. */
export interface QueuedRecipient {
  readonly snapshot: Snapshot
  /** The queued message; its `conversation_id` names `thread`, or the lead's thread on the channel if it has one. */
  readonly message: Message | null
  /** The thread to make (`pending`) when the lead has none on the channel; null with no message. */
  readonly thread: Conversation | null
}

/** Campaign storage, scoped to one account. Its messages are ordinary messages (`campaign_id` set). */
export class CampaignsRepo extends Context.Service<
  CampaignsRepo,
  {
    /** Newest first (`created_at` desc, then `id` desc). */
    readonly list: (
      accountId: string,
      status: Campaign["status"] | undefined,
      page: Page
    ) => Effect.Effect<Listed<StoredCampaign>>
    readonly find: (accountId: string, id: string) => Effect.Effect<StoredCampaign | undefined>
    /** The campaigns among `ids`, locked for the caller's transaction where the store can lock (in id order). */
    readonly findForUpdate: (
      accountId: string,
      ids: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<StoredCampaign>>
    readonly insert: (accountId: string, campaign: StoredCampaign) => Effect.Effect<void>
    readonly update: (accountId: string, campaign: StoredCampaign) => Effect.Effect<void>
    /** Deletes a campaign; whether there was one. */
    readonly remove: (accountId: string, id: string) => Effect.Effect<boolean>
    /**
     * Stores recipients snapshotted at queue time with their threads (those missing) and queued
     * messages, waking the sender where the store can. The SQL store writes a batch in one
     * statement: a 100,000-lead campaign is written in seconds, not minutes.
     */
    readonly queueRecipients: (
      accountId: string,
      campaignId: string,
      recipients: ReadonlyArray<QueuedRecipient>
    ) => Effect.Effect<void>
    /**
     * A queue's writes are done (`queued` messages were written). A store whose plans follow table
     * statistics refreshes them for a large one, so the sender's first claims are planned for the
     * rows that are there (SQL: ANALYZE); others do nothing.
     */
    readonly queueWritten: (queued: number) => Effect.Effect<void>
    /** A page of recipients as `Recipient.view` shows them, in lead id order; `status` filters on what is shown. */
    readonly recipients: (
      accountId: string,
      campaignId: string,
      status: RecipientStatus | undefined,
      page: Page
    ) => Effect.Effect<Listed<Recipient>>
  }
>()("core/CampaignsRepo") {}

import { Effect, Layer } from "effect"
import { CampaignsRepo, type StoredCampaign } from "@leadline/core/campaigns/CampaignsRepo"
import * as Recipient from "@leadline/core/campaigns/Recipient"
import { ConversationsRepo } from "@leadline/core/conversations/ConversationsRepo"
import { MessagesRepo } from "@leadline/core/messages/MessagesRepo"
import * as MemoryLocks from "../MemoryLocks.ts"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly campaign: StoredCampaign
}

interface RecipientRow {
  readonly accountId: string
  readonly campaignId: string
  readonly snapshot: Recipient.Snapshot
}

/** Campaigns newest first, and each queued campaign's recipients in lead id order. */
export const layer = Layer.effect(
  CampaignsRepo,
  Effect.gen(function* () {
    const messages = yield* MessagesRepo
    const conversations = yield* ConversationsRepo
    const campaigns = MemoryTable.make({
      primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.campaign.id),
      indexes: { account: (row) => row.accountId },
      order: MemoryTable.newestFirst(
        (row: Row) => row.campaign.created_at,
        (row) => row.campaign.id
      )
    })
    const recipients = MemoryTable.make({
      primaryKey: (row: RecipientRow) => MemoryTable.key(row.accountId, row.campaignId, row.snapshot.lead_id),
      indexes: {
        campaign: {
          key: (row: RecipientRow) => MemoryTable.key(row.accountId, row.campaignId),
          order: {
            compare: (a: RecipientRow, b: RecipientRow) =>
              a.snapshot.lead_id < b.snapshot.lead_id ? -1 : a.snapshot.lead_id > b.snapshot.lead_id ? 1 : 0,
            descending: false
          }
        }
      }
    })
    const find = (accountId: string, id: string) => campaigns.get(MemoryTable.key(accountId, id))?.campaign

    /** Two queue requests for one campaign take turns, as on SQL's FOR UPDATE: the second finds it queued. */
    const locks = MemoryLocks.make()

    return CampaignsRepo.of({
      list: (accountId, status, page) =>
        Effect.sync(() => {
          const slice = campaigns.page(
            "account",
            accountId,
            page,
            status === undefined ? undefined : (row) => row.campaign.status === status
          )
          return { items: slice.items.map((row) => row.campaign), total: slice.total }
        }),
      find: (accountId, id) => Effect.sync(() => find(accountId, id)),
      findForUpdate: (accountId, ids) =>
        Effect.gen(function* () {
          const sorted = [...new Set(ids)].sort()
          yield* locks.lockAll(sorted.map((id) => MemoryTable.key(accountId, id)))
          return sorted.flatMap((id) => find(accountId, id) ?? [])
        }),
      insert: (accountId, campaign) =>
        atomically((tx) => {
          campaigns.insert(tx, { accountId, campaign })
        }),
      update: (accountId, campaign) =>
        atomically((tx) => {
          campaigns.update(tx, { accountId, campaign })
        }),
      remove: (accountId, id) => atomically((tx) => campaigns.remove(tx, MemoryTable.key(accountId, id)) !== undefined),
      queueRecipients: (accountId, campaignId, queued) =>
        Effect.gen(function* () {
          const sent = queued.filter((r) => r.message !== null && r.thread !== null)
          const threads = yield* conversations.findOrCreate(
            accountId,
            sent.map((r) => r.thread!)
          )
          yield* messages.insertOutbound(
            accountId,
            sent.map((r, i) => ({ ...r.message!, conversation_id: threads[i]!.id }))
          )
          yield* atomically((tx) => {
            for (const { snapshot } of queued) recipients.insert(tx, { accountId, campaignId, snapshot })
          })
        }),
      queueWritten: () => Effect.void,
      recipients: (accountId, campaignId, status, page) =>
        Effect.gen(function* () {
          const shown = yield* Effect.forEach(
            [...recipients.scan("campaign", MemoryTable.key(accountId, campaignId))],
            ({ snapshot }) =>
              Effect.map(
                snapshot.message_id === null
                  ? Effect.succeed(undefined)
                  : messages.find(accountId, snapshot.message_id),
                (message) => Recipient.view(snapshot, message)
              )
          )
          const matching = status === undefined ? shown : shown.filter((r) => r.status === status)
          return { items: matching.slice(page.offset, page.offset + page.limit), total: matching.length }
        })
    })
  })
)

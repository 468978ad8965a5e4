import { Effect, Layer } from "effect"
import { type Conversation, windowExpiry } from "@leadline/core/conversations/Conversation"
import * as Calendar from "@leadline/core/metrics/Calendar"
import { ConversationsRepo } from "@leadline/core/conversations/ConversationsRepo"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly conversation: Conversation
}

const latest = (c: Conversation) => c.last_message_at ?? c.created_at
const later = (a: string | null, b: string) => (a === null || b > a ? b : a)

/** Conversations by account, unique per (channel, lead), newest activity first. */
export const layer = Layer.sync(ConversationsRepo)(() => {
  const conversations = MemoryTable.make({
    primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.conversation.id),
    unique: {
      thread: (row) => MemoryTable.key(row.accountId, row.conversation.channel_id, row.conversation.lead_id)
    },
    indexes: { account: (row) => row.accountId },
    order: MemoryTable.newestFirst(
      (row: Row) => latest(row.conversation),
      (row) => row.conversation.id
    )
  })
  const find = (accountId: string, id: string) => conversations.get(MemoryTable.key(accountId, id))?.conversation

  return ConversationsRepo.of({
    list: (accountId, filters, page) =>
      Effect.sync(() => {
        const slice = conversations.page("account", accountId, page, ({ conversation: c }) => {
          const assignee = filters.assigned_user_id
          return (
            (filters.status === undefined || c.status === filters.status) &&
            (assignee === undefined ||
              (assignee === "none" ? c.assigned_user_id === null : c.assigned_user_id === assignee)) &&
            (filters.lead_id === undefined || c.lead_id === filters.lead_id) &&
            (filters.channel_id === undefined || c.channel_id === filters.channel_id)
          )
        })
        return { items: slice.items.map((row) => row.conversation), total: slice.total }
      }),
    find: (accountId, id) => Effect.sync(() => find(accountId, id)),
    createdPerBucket: (accountId, bounds) =>
      Effect.sync(() =>
        Calendar.countPerBucket(
          bounds,
          Array.from(conversations.scan("account", accountId), (row) => Date.parse(row.conversation.created_at))
        )
      ),
    update: (accountId, conversation) =>
      atomically((tx) => {
        if (find(accountId, conversation.id) === undefined) return undefined
        conversations.update(tx, { accountId, conversation })
        return conversation
      }),
    findOrCreate: (accountId, wanted) =>
      atomically((tx) =>
        wanted.map((fresh) => {
          const existing = conversations.find(
            "thread",
            MemoryTable.key(accountId, fresh.channel_id, fresh.lead_id)
          )?.conversation
          if (existing !== undefined) return existing
          conversations.insert(tx, { accountId, conversation: fresh })
          return fresh
        })
      ),
    wakeSnoozed: (now) =>
      atomically((tx) => {
        const woken: Array<{ accountId: string; conversation: Conversation; snoozedUntil: string }> = []
        for (const row of [...conversations.rows()]) {
          const c = row.conversation
          if (c.status !== "snoozed" || c.snoozed_until === null || c.snoozed_until > now) continue
          const conversation: Conversation = { ...c, status: "open", snoozed_until: null, updated_at: now }
          conversations.update(tx, { accountId: row.accountId, conversation })
          woken.push({ accountId: row.accountId, conversation, snoozedUntil: c.snoozed_until })
        }
        return woken
      }),
    removeForLead: (accountId, leadId) =>
      atomically((tx) => {
        for (const row of [...conversations.scan("account", accountId)]) {
          if (row.conversation.lead_id === leadId)
            conversations.remove(tx, MemoryTable.key(accountId, row.conversation.id))
        }
      }),
    recordInbound: (accountId, moved) =>
      atomically((tx) => {
        for (const inbound of moved) {
          const current = find(accountId, inbound.id)
          if (current === undefined) continue
          const lastInbound = later(current.last_inbound_at, inbound.at)
          conversations.update(tx, {
            accountId,
            conversation: {
              ...current,
              contact_wa_id: inbound.waId,
              last_inbound_at: lastInbound,
              service_window_expires_at: windowExpiry(lastInbound),
              last_message_at: later(current.last_message_at, inbound.now),
              status: "open",
              snoozed_until: null,
              updated_at: inbound.now
            }
          })
        }
      }),
    recordOutbound: (accountId, ids, now) =>
      atomically((tx) => {
        for (const id of ids) {
          const current = find(accountId, id)
          if (current === undefined) continue
          conversations.update(tx, {
            accountId,
            conversation: { ...current, last_message_at: later(current.last_message_at, now), updated_at: now }
          })
        }
      }),
    learnWaIds: (accountId, learned) =>
      atomically((tx) => {
        for (const { id, waId } of learned) {
          const current = find(accountId, id)
          if (current === undefined || current.contact_wa_id !== null) continue
          conversations.update(tx, { accountId, conversation: { ...current, contact_wa_id: waId } })
        }
      }),
    leadsByWaId: (accountId, channelId, waIds) =>
      Effect.sync(() => {
        const wanted = new Set(waIds)
        const found = new Map<string, string>()
        for (const { conversation } of conversations.scan("account", accountId)) {
          const waId = conversation.contact_wa_id
          if (conversation.channel_id === channelId && waId !== null && wanted.has(waId) && !found.has(waId)) {
            found.set(waId, conversation.lead_id)
          }
        }
        return found
      })
  })
})

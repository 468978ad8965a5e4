import { Context, Effect, Layer, PubSub } from "effect"
import * as Calendar from "@leadline/core/metrics/Calendar"
import * as Metrics from "@leadline/core/metrics/Metrics"
import { ChannelsRepo } from "@leadline/core/channels/ChannelsRepo"
import { ConversationsRepo } from "@leadline/core/conversations/ConversationsRepo"
import { FirstResponses } from "@leadline/core/conversations/FirstResponses"
import { type ThreadSummary, ThreadSummaries } from "@leadline/core/conversations/ThreadSummaries"
import { LeadsRepo } from "@leadline/core/leads/LeadsRepo"
import type { Message } from "@leadline/core/messages/Message"
import { type Counted, MessagesRepo } from "@leadline/core/messages/MessagesRepo"
import type { OutboundStatus } from "@leadline/core/messages/StatusMerge"
import { type ClaimedMessage, OutboundQueue } from "@leadline/core/messages/OutboundQueue"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly message: Message
}

/** Whether analytics counts the message as `kind` (`MessagesRepo.createdPerBucket`). */
const counts = (kind: Counted, message: Message): boolean =>
  kind === "inbound"
    ? message.direction === "inbound"
    : message.direction === "outbound" &&
      message.status !== "failed" &&
      message.status !== "cancelled" &&
      (kind === "outbound" || message.sender_type === "agent")

/** The earliest creation of the messages, after `after` when given. */
const earliest = (messages: ReadonlyArray<Message>, after = Number.NEGATIVE_INFINITY): number | undefined => {
  let found: number | undefined
  for (const message of messages) {
    const at = Date.parse(message.created_at)
    if (at > after && (found === undefined || at < found)) found = at
  }
  return found
}

/** What the sender keeps on a queued message (the SQL columns of migration 0007). */
interface Sending {
  notBefore: number
  leaseUntil: number
  sendingSince: number | null
  attempts: number
  owner: string | null
}

/**
 * Messages by conversation, newest first; a wamid is unique on its channel. The sender's
 * queue reads the same table: one process, so a claim is a plain loop over queued rows.
 */
export const layer = Layer.effectContext(
  Effect.gen(function* () {
    const channels = yield* ChannelsRepo
    const conversations = yield* ConversationsRepo
    const leads = yield* LeadsRepo
    const wake = yield* PubSub.sliding<void>(1)
    // After the current commit's callbacks: a sender woken at once could claim a message that a later
    // callback of the same commit holds (a campaign queued on a flagged channel).
    const signal = () => queueMicrotask(() => Effect.runFork(PubSub.publish(wake, undefined)))
    const messages = MemoryTable.make({
      primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.message.id),
      unique: {
        external: (row) =>
          row.message.external_id === null
            ? undefined
            : MemoryTable.key(row.accountId, row.message.channel_id, row.message.external_id)
      },
      indexes: {
        account: (row) => row.accountId,
        conversation: (row) => MemoryTable.key(row.accountId, row.message.conversation_id),
        campaign: (row) =>
          row.message.campaign_id === null ? undefined : MemoryTable.key(row.accountId, row.message.campaign_id)
      },
      order: MemoryTable.newestFirst(
        (row: Row) => row.message.created_at,
        (row) => row.message.id
      )
    })
    const sending = new Map<string, Sending>()
    const find = (accountId: string, id: string) => messages.get(MemoryTable.key(accountId, id))?.message

    const repo = MessagesRepo.of({
      list: (accountId, conversationId, page, before) =>
        Effect.sync(() => {
          const older = (row: Row) =>
            before === undefined ||
            row.message.created_at < before.created_at ||
            (row.message.created_at === before.created_at && row.message.id < before.id)
          const slice = messages.page("conversation", MemoryTable.key(accountId, conversationId), page, older)
          return { items: slice.items.map((row) => row.message), total: slice.total }
        }),
      find: (accountId, id) => Effect.sync(() => find(accountId, id)),
      latestInbound: (accountId, conversationId) =>
        Effect.sync(() => {
          let latest: Message | undefined
          for (const { message } of messages.scan("conversation", MemoryTable.key(accountId, conversationId))) {
            if (message.direction !== "inbound") continue
            if (
              latest === undefined ||
              message.created_at > latest.created_at ||
              (message.created_at === latest.created_at && message.id > latest.id)
            ) {
              latest = message
            }
          }
          return latest
        }),
      markRead: (accountId, id, at) =>
        atomically((tx) => {
          const message = find(accountId, id)
          if (message === undefined || message.direction !== "inbound" || message.read_at !== null) return message
          const marked = { ...message, read_at: at, updated_at: at }
          messages.update(tx, { accountId, message: marked })
          return marked
        }),
      createdPerBucket: (accountId, kind, bounds) =>
        Effect.sync(() =>
          Calendar.countPerBucket(
            bounds,
            Array.from(messages.scan("account", accountId), (row) => row.message)
              .filter((message) => counts(kind, message))
              .map((message) => Date.parse(message.created_at))
          )
        ),
      findForUpdate: (accountId, ids) => Effect.sync(() => ids.flatMap((id) => find(accountId, id) ?? [])),
      idsByExternalId: (accountId, channelId, externalIds) =>
        Effect.sync(() => {
          const found = new Map<string, string>()
          for (const externalId of externalIds) {
            const row = messages.find("external", MemoryTable.key(accountId, channelId, externalId))
            if (row !== undefined) found.set(externalId, row.message.id)
          }
          return found
        }),
      removeForLead: (accountId, leadId) =>
        atomically((tx) => {
          const gone: Array<Message> = []
          for (const row of [...messages.rows()]) {
            if (row.accountId !== accountId || row.message.lead_id !== leadId) continue
            messages.remove(tx, MemoryTable.key(accountId, row.message.id))
            sending.delete(MemoryTable.key(accountId, row.message.id))
            gone.push(row.message)
          }
          return gone
        }),
      saveDeliveries: (accountId, saved) =>
        atomically((tx) => {
          for (const message of saved) {
            messages.update(tx, { accountId, message })
            if (message.status !== "queued") sending.delete(MemoryTable.key(accountId, message.id))
          }
        }),
      insertOutbound: (accountId, queued) =>
        atomically((tx) => {
          for (const message of queued) messages.insert(tx, { accountId, message })
          tx.onCommit(() => {
            for (const message of queued) {
              sending.set(MemoryTable.key(accountId, message.id), {
                notBefore: Date.parse(message.scheduled_at ?? message.created_at),
                leaseUntil: 0,
                sendingSince: null,
                attempts: 0,
                owner: null
              })
            }
            signal()
          })
        }),
      cancelQueued: (accountId, campaignId, now) =>
        atomically((tx) => {
          const cancelled: Array<Message> = []
          for (const row of [...messages.scan("campaign", MemoryTable.key(accountId, campaignId))]) {
            const key = MemoryTable.key(accountId, row.message.id)
            if (row.message.status !== "queued" || (sending.get(key)?.sendingSince ?? null) !== null) continue
            const message: Message = { ...row.message, status: "cancelled", updated_at: now }
            messages.update(tx, { accountId, message })
            cancelled.push(message)
          }
          return cancelled
        }),
      countsByCampaign: (accountId, campaignIds) =>
        Effect.sync(() => {
          const counts = new Map<string, Partial<Record<OutboundStatus, number>>>()
          for (const campaignId of campaignIds) {
            const byStatus: Partial<Record<OutboundStatus, number>> = {}
            for (const { message } of messages.scan("campaign", MemoryTable.key(accountId, campaignId))) {
              const status = message.status as OutboundStatus
              byStatus[status] = (byStatus[status] ?? 0) + 1
            }
            counts.set(campaignId, byStatus)
          }
          return counts
        }),
      campaignsWithQueued: (accountId, campaignIds) =>
        Effect.sync(
          () =>
            new Set(
              campaignIds.filter((campaignId) =>
                [...messages.scan("campaign", MemoryTable.key(accountId, campaignId))].some(
                  (row) => row.message.status === "queued"
                )
              )
            )
        ),
      insertInbound: (accountId, inbound) =>
        atomically((tx) => {
          const stored = new Set<string>()
          for (const message of inbound) {
            if (messages.insert(tx, { accountId, message }) === undefined) stored.add(message.id)
          }
          return stored
        })
    })

    const queue = OutboundQueue.of({
      claim: (worker, now, leaseMillis, limit) =>
        Effect.gen(function* () {
          const due: Array<{ key: string; row: Row; state: Sending }> = []
          for (const [key, state] of sending) {
            const row = messages.get(key)
            if (row === undefined || row.message.status !== "queued") {
              sending.delete(key)
              continue
            }
            if (state.notBefore <= now && state.leaseUntil <= now) due.push({ key, row, state })
          }
          const lane = (row: Row) => (row.message.campaign_id === null ? 0 : 1)
          due.sort(
            (a, b) =>
              lane(a.row) - lane(b.row) ||
              a.state.notBefore - b.state.notBefore ||
              (a.row.message.id < b.row.message.id ? -1 : 1)
          )
          const claimed: Array<ClaimedMessage> = []
          for (const { row, state } of due.slice(0, limit)) {
            const interrupted = state.sendingSince !== null
            state.leaseUntil = now + leaseMillis
            state.owner = worker
            const { accountId, message } = row
            const channel = yield* channels.find(accountId, message.channel_id)
            const connection = channel === undefined ? undefined : yield* channels.connection(channel.phone_number_id)
            const conversation = yield* conversations.find(accountId, message.conversation_id)
            const lead = yield* leads.find(accountId, message.lead_id)
            if (channel === undefined || connection === undefined || conversation === undefined || lead === undefined) {
              continue
            }
            claimed.push({
              accountId,
              message,
              channel: {
                phoneNumberId: channel.phone_number_id,
                accessToken: connection.accessToken,
                active: channel.status === "active"
              },
              to: conversation.contact_wa_id ?? lead.phone.slice(1),
              attempts: state.attempts + 1,
              interrupted
            })
          }
          return claimed
        }),
      beginSend: (worker, keys, now) =>
        Effect.sync(() => {
          const begun = new Set<string>()
          for (const { accountId, id } of keys) {
            const state = sending.get(MemoryTable.key(accountId, id))
            if (state === undefined || state.owner !== worker || state.sendingSince !== null) continue
            state.sendingSince = now
            state.attempts++
            begun.add(id)
          }
          return begun
        }),
      channelRefused: (accountId, channelId, error) => channels.setLastError(accountId, channelId, error),
      retryLater: (accountId, id, notBefore) =>
        Effect.sync(() => {
          const state = sending.get(MemoryTable.key(accountId, id))
          if (state === undefined) return
          state.notBefore = notBefore
          state.leaseUntil = 0
          state.sendingSince = null
        }),
      holdCampaigns: (accountId, channelId, until, now) =>
        // On commit: the queue's state of messages queued in the same transaction exists from then on.
        atomically((tx) =>
          tx.onCommit(() => {
            let released = false
            for (const [key, state] of sending) {
              const message = messages.get(key)?.message
              if (message === undefined || message.status !== "queued" || state.sendingSince !== null) continue
              if (message.campaign_id === null || message.channel_id !== channelId) continue
              if (key !== MemoryTable.key(accountId, message.id)) continue
              if (until !== null) state.notBefore = until
              else if (state.notBefore > now) {
                state.notBefore = Math.max(message.scheduled_at === null ? now : Date.parse(message.scheduled_at), now)
                released = true
              }
            }
            if (released) signal()
          })
        ),
      backlog: (now) =>
        Effect.sync(() => {
          let due = 0
          let oldestDueAt: number | undefined
          for (const [key, state] of sending) {
            if (messages.get(key)?.message.status !== "queued" || state.notBefore > now) continue
            due++
            if (oldestDueAt === undefined || state.notBefore < oldestDueAt) oldestDueAt = state.notBefore
          }
          return { due, oldestDueAt }
        }),
      wakeups: Effect.map(PubSub.subscribe(wake), (subscription) => Effect.asVoid(PubSub.take(subscription)))
    })

    const threadSummaries = ThreadSummaries.of({
      summaries: (accountId, conversationIds) =>
        Effect.sync(() => {
          const found = new Map<string, ThreadSummary>()
          for (const conversationId of new Set(conversationIds)) {
            // Newest first (the table's order): the first row is the last message, and the
            // inbound rows before the first read one are the unread.
            let last: Message | undefined
            let unread = 0
            for (const { message } of messages.scan("conversation", MemoryTable.key(accountId, conversationId))) {
              last ??= message
              if (message.direction === "inbound") {
                if (message.read_at === null) unread++
                else break
              }
            }
            if (last !== undefined) found.set(conversationId, { last, unread })
          }
          return found
        })
    })
    const firstResponses = FirstResponses.of({
      stats: (accountId, window) =>
        Effect.sync(() => {
          const threads = new Map<string, Array<Message>>()
          for (const { message } of messages.scan("account", accountId))
            threads.set(message.conversation_id, [...(threads.get(message.conversation_id) ?? []), message])
          const seconds: Array<number> = []
          for (const thread of threads.values()) {
            const firstIn = earliest(thread.filter((message) => message.direction === "inbound"))
            if (firstIn === undefined || Calendar.bucketOf(window, firstIn) !== 0) continue
            const answer = earliest(
              thread.filter((message) => message.direction === "outbound"),
              firstIn
            )
            if (answer !== undefined) seconds.push((answer - firstIn) / 1000)
          }
          return Metrics.durationStats(seconds)
        })
    })
    return Context.make(MessagesRepo, repo).pipe(
      Context.add(OutboundQueue, queue),
      // First-response times come from the messages here (the SQL store keeps them on conversations).
      Context.add(FirstResponses, firstResponses),
      Context.add(ThreadSummaries, threadSummaries)
    )
  })
)

import * as OpsMetrics from "../observability/OpsMetrics.ts"
import { Context, Effect, Layer } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import { ChannelsRepo } from "../channels/ChannelsRepo.ts"
import { type Conversation, fresh } from "../conversations/Conversation.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import { emit, emitAll, Outbox, pending } from "../events/Outbox.ts"
import * as ConversationEvents from "../conversations/ConversationEvents.ts"
import * as Ids from "../Ids.ts"
import * as NewLead from "../leads/Lead.ts"
import * as LeadEvents from "../leads/LeadEvents.ts"
import { LeadsRepo } from "../leads/LeadsRepo.ts"
import * as NewMessage from "../messages/Message.ts"
import type { Message } from "../messages/Message.ts"
import { InboundReceived } from "../messages/InboundReceived.ts"
import * as MessageEvents from "../messages/MessageEvents.ts"
import { MessageStatuses, type Update } from "../messages/MessageStatuses.ts"
import { MessagesRepo } from "../messages/MessagesRepo.ts"
import * as GroupCommit from "../internal/GroupCommit.ts"
import { Transactor } from "../Transactor.ts"
import type { Change, InboundMessage, StatusUpdate } from "./InboundBatch.ts"

/** How many webhooks' batches one transaction stores at most. */
const MAX_WEBHOOKS_PER_TRANSACTION = 64

/** What a batch came to: messages stored, redeliveries of stored ones, items not ours to keep. */
export interface Receipt {
  readonly stored: number
  readonly duplicates: number
  readonly skipped: number
}

/**
 * A WhatsApp webhook's batch (docs/contract-messaging.md §6.1), already verified and read by the
 * transport (`@leadline/whatsapp-adapter`): each item on its own, all items of one POST in one
 * transaction (shared with the POSTs that arrived while the one before ran), committed before
 * `receive` answers. A duplicate (Meta redelivers) changes nothing and emits nothing.
 */
export class Inbound extends Context.Service<
  Inbound,
  {
    readonly receive: (changes: ReadonlyArray<Change>) => Effect.Effect<Receipt>
  }
>()("core/WhatsAppInbound") {
  static readonly layer: Layer.Layer<
    Inbound,
    never,
    | ChannelsRepo
    | LeadsRepo
    | ConversationsRepo
    | MessagesRepo
    | MessageStatuses
    | InboundReceived
    | Transactor
    | Outbox
  > = Layer.effect(
    Inbound,
    Effect.gen(function* () {
      const channels = yield* ChannelsRepo
      const leads = yield* LeadsRepo
      const conversations = yield* ConversationsRepo
      const messages = yield* MessagesRepo
      const transactor = yield* Transactor
      const outbox = yield* Outbox
      const statuses = yield* MessageStatuses
      const received = yield* InboundReceived
      const warned = new Set<string>()

      /** A new lead for a number that wrote in (with `lead.created`); the existing one if another request made it first. */
      const createLead = Effect.fnUntraced(function* (accountId: string, item: InboundMessage) {
        const lead = NewLead.fromWhatsApp(yield* Ids.make("ld"), item.from, item.profileName, yield* Ids.now)
        const phone = lead.phone
        const inserted = yield* leads.insert(accountId, lead).pipe(
          Effect.as(true),
          Effect.catchTag("Conflict", () => Effect.succeed(false))
        )
        if (inserted) {
          yield* emit(LeadEvents.created, lead)
          return lead.id
        }
        return (yield* leads.idsByPhone(accountId, [phone])).get(phone)!
      })

      /**
       * A change's messages, stored as one batch: the leads writing in (by their conversation's
       * `wa_id`, then by phone, else new), their conversations, the messages (a wamid already
       * stored is a redelivery: skipped), the threads moved, `message.received` for each new one.
       * The statements are per batch, not per message.
       */
      const storeMessages = Effect.fnUntraced(function* (
        accountId: string,
        channelId: string,
        items: ReadonlyArray<InboundMessage>
      ) {
        const firstFrom = new Map<string, InboundMessage>()
        for (const item of items) if (!firstFrom.has(item.from)) firstFrom.set(item.from, item)
        const leadOf = new Map(yield* conversations.leadsByWaId(accountId, channelId, [...firstFrom.keys()]))
        const unknown = [...firstFrom.keys()].filter((waId) => !leadOf.has(waId))
        if (unknown.length > 0) {
          const byPhone = yield* leads.idsByPhone(
            accountId,
            unknown.map((waId) => `+${waId}`)
          )
          for (const waId of unknown) {
            leadOf.set(waId, byPhone.get(`+${waId}`) ?? (yield* createLead(accountId, firstFrom.get(waId)!)))
          }
        }
        const now = yield* Ids.now
        const wanted: Array<Conversation> = []
        for (const waId of firstFrom.keys()) {
          wanted.push(
            fresh({
              id: yield* Ids.make("cv"),
              lead_id: leadOf.get(waId)!,
              channel_id: channelId,
              status: "open",
              contact_wa_id: waId,
              now
            })
          )
        }
        const threads = yield* conversations.findOrCreate(accountId, wanted)
        // A thread that is the one asked for is new.
        const begun = threads.filter((thread, i) => thread.id === wanted[i]!.id)
        if (begun.length > 0) yield* emitAll(begun.map((thread) => pending(ConversationEvents.created, thread)))
        const threadOf = new Map([...firstFrom.keys()].map((waId, i) => [waId, threads[i]!]))
        // Replies name the message they answer by its wamid: ours when Leadline stored it on this channel.
        const answered = items.flatMap((item) => (item.repliesTo == null ? [] : [item.repliesTo]))
        const repliedIds =
          answered.length === 0 ? new Map() : yield* messages.idsByExternalId(accountId, channelId, answered)
        const built: Array<Message> = []
        const senderOf = new Map<string, string>()
        for (const item of items) {
          const repliedId = item.repliesTo == null ? undefined : repliedIds.get(item.repliesTo)
          const leadId = leadOf.get(item.from)!
          built.push(
            NewMessage.fromWhatsApp(
              {
                id: yield* Ids.make("msg"),
                conversation_id: threadOf.get(item.from)!.id,
                lead_id: leadId,
                channel_id: channelId
              },
              {
                type: item.type,
                text: item.text,
                media: item.media,
                error: item.error,
                externalId: item.externalId,
                providerTimestamp: item.timestamp.toISOString(),
                providerPayload: item.payload,
                replyTo: repliedId === undefined ? null : { message_id: repliedId, external_id: item.repliesTo! }
              },
              now
            )
          )
          senderOf.set(built.at(-1)!.id, item.from)
        }
        const storedIds = yield* messages.insertInbound(accountId, built)
        const stored = built.filter((message) => storedIds.has(message.id))
        const flags = built.map((message) => storedIds.has(message.id))
        if (stored.length === 0) return flags
        yield* OpsMetrics.countMessages(
          "inbound",
          stored.map((message) => message.status)
        )
        const moved = new Map<string, { id: string; at: string; waId: string; now: string }>()
        for (const message of stored) {
          const at = message.provider_timestamp!
          const previous = moved.get(message.conversation_id)
          if (previous === undefined || previous.at < at) {
            moved.set(message.conversation_id, {
              id: message.conversation_id,
              at,
              waId: senderOf.get(message.id)!,
              now
            })
          }
        }
        yield* conversations.recordInbound(accountId, [...moved.values()])
        // A lead writing into a thread that was not open opens it: its status changed.
        const reopened = threads.filter((thread) => thread.status !== "open" && moved.has(thread.id))
        for (const before of reopened) {
          const after = yield* conversations.find(accountId, before.id)
          if (after !== undefined) yield* emitAll(ConversationEvents.changeEvents(before, after))
        }
        yield* emitAll(stored.map((message) => pending(MessageEvents.received, message)))
        // After message.received, in the same transaction: the resources above react (orders, agents).
        yield* received.run({ accountId, messages: stored, threads })
        return flags
      })

      /**
       * A change's statuses for our messages, merged in one batch: each found by WhatsApp's id,
       * else by the id we sent as `biz_opaque_callback_data` (a status can beat the send's own
       * answer). Unknown ids are messages sent another way: acknowledged, ignored. How many were ours.
       */
      const applyStatuses = Effect.fnUntraced(function* (
        accountId: string,
        channelId: string,
        items: ReadonlyArray<StatusUpdate>
      ) {
        const known = yield* messages.idsByExternalId(
          accountId,
          channelId,
          items.map((item) => item.externalId)
        )
        const updates: Array<Update> = []
        const itemOf: Array<number> = []
        for (const [index, item] of items.entries()) {
          const byExternal = known.get(item.externalId)
          const messageId = byExternal ?? item.callbackData
          if (messageId === null) continue
          itemOf.push(index)
          updates.push({
            messageId,
            incoming: { status: item.status, at: item.timestamp.toISOString(), error: item.error },
            learned: { externalId: item.externalId, waId: item.recipientId },
            channelId: byExternal === undefined ? channelId : undefined
          })
        }
        const results = yield* statuses.applyAll(accountId, updates)
        const ours = items.map(() => false)
        results.forEach((message, k) => {
          if (message !== undefined) ours[itemOf[k]!] = true
        })
        return ours
      })

      /**
       * The batches of several webhooks in one transaction: each phone number's messages and
       * statuses merged across them (one set of statements per number, however many POSTs), and
       * a receipt per webhook.
       */
      const receiveAll = (batches: ReadonlyArray<ReadonlyArray<Change>>) =>
        Effect.gen(function* () {
          const receipts = batches.map(() => ({ stored: 0, duplicates: 0, skipped: 0 }))
          const merged = new Map<
            string,
            {
              messages: Array<InboundMessage>
              messageFrom: Array<number>
              statuses: Array<StatusUpdate>
              statusFrom: Array<number>
              errors: Array<Change["errors"][number]>
            }
          >()
          batches.forEach((changes, from) => {
            for (const change of changes) {
              let number = merged.get(change.phoneNumberId)
              if (number === undefined) {
                number = { messages: [], messageFrom: [], statuses: [], statusFrom: [], errors: [] }
                merged.set(change.phoneNumberId, number)
              }
              for (const message of change.messages) {
                number.messages.push(message)
                number.messageFrom.push(from)
              }
              for (const status of change.statuses) {
                number.statuses.push(status)
                number.statusFrom.push(from)
              }
              number.errors.push(...change.errors)
            }
          })
          yield* transactor.withTransaction(
            Effect.forEach(
              merged,
              Effect.fnUntraced(function* ([phoneNumberId, change]) {
                const connection = yield* channels.connection(phoneNumberId)
                if (connection === undefined || connection.channel.status !== "active") {
                  if (!warned.has(phoneNumberId)) {
                    warned.add(phoneNumberId)
                    yield* Effect.logWarning(
                      `WhatsApp webhook for phone_number_id ${phoneNumberId}: no active channel; acknowledged and skipped`
                    )
                  }
                  for (const from of [...change.messageFrom, ...change.statusFrom]) receipts[from]!.skipped++
                  return
                }
                const { accountId, channel } = connection
                const asSystem = Effect.provideService(CurrentPrincipal, systemPrincipal(accountId, "whatsapp"))
                // Statuses first: a revival's usage reservation waits for every usage stripe, so it must
                // come before the customers' conversations are locked by their messages, as a send takes
                // its stripe before its conversation (Messages.ts); the other order deadlocked with a
                // reply to one of those customers (found by the soak, bench/SOAK.md).
                if (change.statuses.length > 0) {
                  const ours = yield* asSystem(applyStatuses(accountId, channel.id, change.statuses))
                  ours.forEach((known, i) => {
                    if (!known) receipts[change.statusFrom[i]!]!.skipped++
                  })
                }
                if (change.messages.length > 0) {
                  const stored = yield* asSystem(storeMessages(accountId, channel.id, change.messages))
                  stored.forEach((fresh, i) => {
                    const receipt = receipts[change.messageFrom[i]!]!
                    if (fresh) receipt.stored++
                    else receipt.duplicates++
                  })
                }
                for (const error of change.errors) {
                  yield* Effect.logWarning(
                    `WhatsApp reported an error for phone_number_id ${phoneNumberId}: ${error.code ?? "?"} ${error.title ?? ""} ${error.message ?? ""}`
                  )
                }
                // An error about the number itself (its throughput, say) is what the account sees on the channel.
                const last = change.errors.at(-1)
                if (last !== undefined) {
                  yield* channels.setLastError(accountId, channel.id, {
                    code: "provider_error",
                    message: last.message ?? last.title ?? "WhatsApp reported an error",
                    provider_code: last.code
                  })
                }
              }),
              { discard: true }
            ).pipe(Effect.provideService(Outbox, outbox))
          )
          return receipts as ReadonlyArray<Receipt>
        })

      // Meta sends one message per webhook: the POSTs that arrive while a transaction runs are
      // stored together in the next, each answered once its own is committed.
      const receive = yield* GroupCommit.make(receiveAll, { maxBatch: MAX_WEBHOOKS_PER_TRANSACTION })

      return Inbound.of({ receive })
    })
  )
}

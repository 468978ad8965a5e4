import { Context, Effect, Layer, Redacted } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import { ChannelsRepo } from "../channels/ChannelsRepo.ts"
import { fresh } from "../conversations/Conversation.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import * as Random from "../internal/random.ts"
import type { Lead } from "../leads/Lead.ts"
import * as LeadEvents from "../leads/LeadEvents.ts"
import { LeadsRepo } from "../leads/LeadsRepo.ts"
import type { Message } from "../messages/Message.ts"
import * as MessageEvents from "../messages/MessageEvents.ts"
import { MessageStatuses } from "../messages/MessageStatuses.ts"
import { MessagesRepo } from "../messages/MessagesRepo.ts"
import { Transactor } from "../Transactor.ts"
import * as MetaSignature from "./MetaSignature.ts"
import * as MetaWebhook from "./MetaWebhook.ts"

/**
 * The Meta app the deployment receives webhooks for (CONTRACT-MESSAGING §11). Without
 * settings, each process makes its own random pair: enough for the simulator and tests;
 * a server that Meta calls sets both.
 */
export const MetaApp = Context.Reference<{
  readonly appSecret: Redacted.Redacted<string>
  readonly verifyToken: Redacted.Redacted<string>
}>("core/MetaApp", {
  defaultValue: () => ({
    appSecret: Redacted.make(Random.base64url(Random.randomBytes(24))),
    verifyToken: Redacted.make(Random.base64url(Random.randomBytes(24)))
  })
})

export type Receipt =
  | { readonly _tag: "Unauthorized" }
  | { readonly _tag: "Accepted"; readonly stored: number; readonly duplicates: number; readonly skipped: number }

const MAX_NAME = 200

/**
 * WhatsApp's webhook (CONTRACT-MESSAGING §6.1): verified over the raw bytes, then each
 * item on its own, all items of one POST in one transaction. A duplicate (Meta redelivers)
 * changes nothing and emits nothing.
 */
export class Inbound extends Context.Service<
  Inbound,
  {
    /** The GET handshake: the challenge to echo, or undefined (403). */
    readonly handshake: (query: {
      readonly mode: string | undefined
      readonly token: string | undefined
      readonly challenge: string | undefined
    }) => Effect.Effect<string | undefined>
    readonly receive: (raw: Uint8Array, signature: string | undefined) => Effect.Effect<Receipt>
  }
>()("core/WhatsAppInbound") {
  static readonly layer: Layer.Layer<
    Inbound,
    never,
    ChannelsRepo | LeadsRepo | ConversationsRepo | MessagesRepo | MessageStatuses | Transactor | Outbox
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
      const app = yield* MetaApp
      const warned = new Set<string>()

      const handshake = (query: {
        readonly mode: string | undefined
        readonly token: string | undefined
        readonly challenge: string | undefined
      }) =>
        Effect.sync(() =>
          query.mode === "subscribe" &&
          query.challenge !== undefined &&
          MetaSignature.verifyToken(Redacted.value(app.verifyToken), query.token)
            ? query.challenge
            : undefined
        )

      /** The lead writing in: by its conversation's `wa_id`, then by phone, else a new one (with `lead.created`). */
      const leadFor = Effect.fnUntraced(function* (
        accountId: string,
        channelId: string,
        item: MetaWebhook.InboundMessage
      ) {
        const known = yield* conversations.leadByWaId(accountId, channelId, item.from)
        if (known !== undefined) return known
        // WhatsApp is the authority that the number exists: no validity check here.
        const phone = `+${item.from}`
        const found = yield* leads.findByPhone(accountId, phone)
        if (found !== undefined) return found.id
        const now = yield* Ids.now
        const lead: Lead = {
          id: yield* Ids.make("ld"),
          name: (item.profileName ?? phone).slice(0, MAX_NAME) || phone,
          phone,
          email: null,
          tags: [],
          status: "new",
          assigned_user_id: null,
          attributes: {},
          created_at: now,
          updated_at: now
        }
        const inserted = yield* leads.insert(accountId, lead).pipe(
          Effect.as(true),
          Effect.catchTag("Conflict", () => Effect.succeed(false))
        )
        if (inserted) {
          yield* emit(LeadEvents.created, lead)
          return lead.id
        }
        // Another request created it first.
        return (yield* leads.findByPhone(accountId, phone))!.id
      })

      const storeMessage = Effect.fnUntraced(function* (
        accountId: string,
        channelId: string,
        item: MetaWebhook.InboundMessage
      ) {
        const leadId = yield* leadFor(accountId, channelId, item)
        const now = yield* Ids.now
        const conversation = yield* conversations.findOrCreate(
          accountId,
          fresh({
            id: yield* Ids.make("cv"),
            lead_id: leadId,
            channel_id: channelId,
            status: "open",
            contact_wa_id: item.from,
            now
          })
        )
        const at = item.timestamp.toISOString()
        const message: Message = {
          id: yield* Ids.make("msg"),
          conversation_id: conversation.id,
          lead_id: leadId,
          channel_id: channelId,
          direction: "inbound",
          type: item.type,
          text: item.text,
          template: null,
          media: item.media,
          status: "received",
          error: item.error,
          external_id: item.externalId,
          sender_type: "lead",
          sender_id: leadId,
          campaign_id: null,
          scheduled_at: null,
          provider_timestamp: at,
          provider_payload: item.payload,
          created_at: now,
          updated_at: now,
          sent_at: null,
          delivered_at: null,
          read_at: null,
          failed_at: null
        }
        if (!(yield* messages.insertInbound(accountId, message))) return false
        yield* conversations.recordInbound(accountId, conversation.id, { at, waId: item.from, now })
        yield* emit(MessageEvents.received, message)
        return true
      })

      /**
       * A status for one of our messages: found by WhatsApp's id, else by the id we sent as
       * `biz_opaque_callback_data` (a status can beat the send's own answer). Unknown ids are
       * messages sent another way: acknowledged, ignored.
       */
      const applyStatus = Effect.fnUntraced(function* (
        accountId: string,
        channelId: string,
        item: MetaWebhook.StatusUpdate
      ) {
        const byExternal = yield* messages.findByExternalId(accountId, channelId, item.externalId)
        const byCallback =
          byExternal === undefined && item.callbackData !== null
            ? yield* messages.find(accountId, item.callbackData)
            : undefined
        const message = byExternal ?? (byCallback?.channel_id === channelId ? byCallback : undefined)
        if (message === undefined) return false
        yield* statuses.apply(
          accountId,
          message.id,
          { status: item.status, at: item.timestamp.toISOString(), error: item.error },
          { externalId: item.externalId, waId: item.recipientId }
        )
        return true
      })

      const receive = (raw: Uint8Array, signature: string | undefined) =>
        Effect.gen(function* () {
          if (!MetaSignature.verify(Redacted.value(app.appSecret), raw, signature)) {
            return { _tag: "Unauthorized" } as const
          }
          const parsed = MetaWebhook.parse(raw)
          if (parsed._tag === "Ignored") {
            // A 4xx would make Meta retry for days something we will never accept.
            yield* Effect.logWarning(`WhatsApp webhook ignored: ${parsed.reason}`)
            return { _tag: "Accepted", stored: 0, duplicates: 0, skipped: 0 } as const
          }
          let stored = 0
          let duplicates = 0
          let skipped = parsed.skipped.length
          for (const item of parsed.skipped) yield* Effect.logWarning(`WhatsApp webhook item skipped: ${item.reason}`)
          yield* transactor.withTransaction(
            Effect.forEach(
              parsed.changes,
              Effect.fnUntraced(function* (change) {
                const connection = yield* channels.connection(change.phoneNumberId)
                if (connection === undefined || connection.channel.status !== "active") {
                  if (!warned.has(change.phoneNumberId)) {
                    warned.add(change.phoneNumberId)
                    yield* Effect.logWarning(
                      `WhatsApp webhook for phone_number_id ${change.phoneNumberId}: no active channel; acknowledged and skipped`
                    )
                  }
                  skipped += change.messages.length + change.statuses.length
                  return
                }
                const { accountId, channel } = connection
                const asSystem = Effect.provideService(CurrentPrincipal, systemPrincipal(accountId, "whatsapp"))
                for (const item of change.messages) {
                  const isNew = yield* asSystem(storeMessage(accountId, channel.id, item))
                  if (isNew) stored++
                  else duplicates++
                }
                for (const item of change.statuses) {
                  if (!(yield* asSystem(applyStatus(accountId, channel.id, item)))) skipped++
                }
                for (const error of change.errors) {
                  yield* Effect.logWarning(
                    `WhatsApp reported an error for phone_number_id ${change.phoneNumberId}: ${error.code ?? "?"} ${error.title ?? ""} ${error.message ?? ""}`
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
          return { _tag: "Accepted", stored, duplicates, skipped } as const
        })

      return Inbound.of({ handshake, receive })
    })
  )
}

import { Clock, Context, Effect, Layer, Schema } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { ChannelsRepo } from "../channels/ChannelsRepo.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import { Conflict, NotFound, type PermissionDenied, WhatsAppProviderError } from "../Errors.ts"
import * as Tracing from "../Tracing.ts"
import { MessagesRepo } from "./MessagesRepo.ts"
import { MessageTransport } from "./MessageTransport.ts"

/** `POST /api/v1/conversations/{id}/read`'s answer (docs/contract-messaging.md §5.6). */
export const ConversationRead = Schema.Struct({
  conversation_id: Schema.String,
  message_id: Schema.NullOr(Schema.String).annotate({
    description: "The latest inbound message, marked read; null when the lead never wrote"
  }),
  read_at: Schema.NullOr(Schema.String).annotate({ description: "When it was first marked read" })
}).annotate({ identifier: "ConversationRead" })
export type ConversationRead = typeof ConversationRead.Type

/**
 * Read receipts: marking a conversation read tells WhatsApp (`status: "read"` on its latest
 * inbound message, which WhatsApp applies to the ones before it too) and records `read_at` on
 * that message. Idempotent: a message already marked is not sent again.
 */
export class ReadReceipts extends Context.Service<
  ReadReceipts,
  {
    readonly markRead: (
      conversationId: string
    ) => Effect.Effect<
      ConversationRead,
      PermissionDenied | NotFound | Conflict | WhatsAppProviderError,
      CurrentPrincipal | MessageTransport
    >
  }
>()("core/ReadReceipts") {
  static readonly layer: Layer.Layer<ReadReceipts, never, MessagesRepo | ConversationsRepo | ChannelsRepo> =
    Layer.effect(
      ReadReceipts,
      Effect.gen(function* () {
        const messages = yield* MessagesRepo
        const conversations = yield* ConversationsRepo
        const channels = yield* ChannelsRepo

        // Not in a transaction: the provider's call is not held inside one, and the receipt and
        // its record are both idempotent, so two racing calls at worst tell WhatsApp twice.
        const markRead = Effect.fnUntraced(function* (conversationId: string) {
          // Blue ticks are something the customer sees: the sending permission, not a reader's.
          const principal = yield* authorize("messages.send")
          const accountId = principal.accountId
          const conversation = yield* conversations.find(accountId, conversationId)
          if (conversation === undefined) return yield* new NotFound({ resource: "conversation", id: conversationId })
          const latest = yield* messages.latestInbound(accountId, conversationId)
          if (latest === undefined) return { conversation_id: conversationId, message_id: null, read_at: null }
          if (latest.read_at !== null || latest.external_id === null) {
            return { conversation_id: conversationId, message_id: latest.id, read_at: latest.read_at }
          }
          const channel = yield* channels.find(accountId, conversation.channel_id)
          const connection =
            channel === undefined || channel.status !== "active"
              ? undefined
              : yield* channels.connection(channel.phone_number_id)
          if (connection === undefined || connection.accountId !== accountId) {
            return yield* new Conflict({ message: "The channel is disabled" })
          }
          const transport = yield* MessageTransport
          yield* transport
            .markRead({
              channel: { phoneNumberId: channel!.phone_number_id, accessToken: connection.accessToken },
              externalId: latest.external_id
            })
            .pipe(
              Effect.tapError((failure) =>
                Effect.logWarning(
                  `WhatsApp read receipt for ${latest.id} failed: ${failure._tag === "Rejected" ? failure.message : failure.reason}`
                )
              ),
              Effect.mapError((failure) =>
                // Graph's own message when Graph answered; a failed connection's says where it went, kept for the log.
                failure._tag === "Rejected" && failure.providerCode !== null
                  ? new WhatsAppProviderError({ message: failure.message, providerCode: failure.providerCode })
                  : new WhatsAppProviderError({ message: "the read receipt got no answer", providerCode: null })
              )
            )
          const now = new Date(yield* Clock.currentTimeMillis).toISOString()
          const marked = yield* messages.markRead(accountId, latest.id, now)
          return { conversation_id: conversationId, message_id: latest.id, read_at: marked?.read_at ?? now }
        }, Tracing.span("ReadReceipts.markRead"))

        return ReadReceipts.of({ markRead })
      })
    )
}

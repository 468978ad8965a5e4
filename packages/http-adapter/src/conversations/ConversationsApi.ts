import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ConversationView, ListQueryFields, UpdateConversation } from "@leadline/core/conversations/Conversation"
import { Message, SendMessage } from "@leadline/core/messages/Message"
import { ConversationRead } from "@leadline/core/messages/ReadReceipts"
import { Meta, PageQueryFields } from "@leadline/core/Pagination"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import {
  Conflict,
  Forbidden,
  LeadOptedOut,
  MessageLimitReached,
  NotFound,
  ValidationError,
  WhatsAppProviderError,
  WindowClosed
} from "../WireErrors.ts"

/** What a send can answer besides 201 (docs/contract-messaging.md §5.2, in the order they are checked). */
export const SEND_ERRORS = [
  Forbidden,
  NotFound,
  ValidationError,
  Conflict,
  WindowClosed,
  MessageLimitReached,
  LeadOptedOut
] as const

export const ConversationList = Schema.Struct({ conversations: Schema.Array(ConversationView), meta: Meta }).annotate({
  identifier: "ConversationList"
})
export const MessageList = Schema.Struct({ messages: Schema.Array(Message), meta: Meta }).annotate({
  identifier: "MessageList"
})

const ConversationId = { id: Id.annotate({ description: "A conversation id, `cv_…`" }) }
const READ = "Needs `conversations:read` or `messages:send`."

export class ConversationsApi extends HttpApiGroup.make("conversations")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: ListQueryFields,
      success: ConversationList,
      error: [Forbidden, ValidationError]
    })
      // A misspelt filter would otherwise be dropped and list every thread: unknown parameters are a 400.
      .annotate(HttpApi.QueryParseOptions, { onExcessProperty: "error", errors: "all" })
      .annotateMerge(
        OpenApi.annotations({
          summary: "List conversations",
          description: `Latest activity first (\`last_message_at\` desc, then \`id\` desc); filters combine (\`assigned_user_id=none\` for the unassigned; an unknown status or a malformed id is a 400 naming the parameter). Each conversation carries what an inbox shows: \`lead\` (\`id\`, \`name\`, \`phone\`), \`last_message\` (a one-line preview of at most 140 characters: the text or caption, or a label such as "Image" or "Template hello_world"; null for a thread without messages) and \`unread_count\` (inbound messages after the latest one marked read by \`POST …/read\`), read for the whole page at once. ${READ}`
        })
      ),
    HttpApiEndpoint.get("get", "/:id", {
      params: ConversationId,
      success: ConversationView,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Get a conversation",
        description: `With its lead, last message and unread count, as listed. ${READ}`
      })
    ),
    HttpApiEndpoint.patch("update", "/:id", {
      params: ConversationId,
      payload: UpdateConversation,
      success: ConversationView,
      error: [Forbidden, NotFound, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Change a conversation's status or assignment",
        description:
          "`snoozed_until` (a future time, or null for until the customer writes) only with `status: snoozed`; any other status clears it. `assigned_user_id` must be a user of the account; null unassigns. No agent answers a conversation with a `handoff` or an assigned user: `handoff: null` gives it back to the agent, as resolving it does. Needs full access."
      })
    ),
    HttpApiEndpoint.get("messages", "/:id/messages", {
      params: ConversationId,
      query: {
        ...PageQueryFields,
        before: Schema.optional(Id.annotate({ description: "Only messages older than this one of the conversation" }))
      },
      success: MessageList,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "List a conversation's messages",
        description: `Newest first; \`before\` anchors the pages, so new messages do not shift them (400 for an id not of this conversation). ${READ}`
      })
    ),
    Idempotent.create("send", "/:id/messages", {
      params: ConversationId,
      payload: SendMessage,
      success: Message,
      error: SEND_ERRORS
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Send a message in a conversation",
        description:
          "Queued (201, `status: queued`); the sender hands it to WhatsApp and `message.sent` follows. `text` or `template`, `interactive` (reply buttons or a list, checked against WhatsApp's limits), or a file: `image`, `video`, `audio` or `document` naming an upload of `POST /api/v1/media` (`id`; a 400 naming e.g. `image.id` when it is not the account's or not of that type) or an https `link`, with a `caption` (not on audio) and a document's `filename`. Free-form `text`, `interactive` and files only within 24 hours of the lead's last message (409 `customer_service_window_closed` otherwise: send a template); a template the channel's synced template list refuses is a 400 naming `template.name`, `template.language` or `template.components`, and a MARKETING one to an opted-out lead a 409 `lead_opted_out`; 409 `conflict` when the channel is disabled; 402 `message_limit_reached` at the plan's monthly limit. Needs `messages:send`."
      })
    ),
    HttpApiEndpoint.post("read", "/:id/read", {
      params: ConversationId,
      success: ConversationRead,
      error: [Forbidden, NotFound, Conflict, WhatsAppProviderError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Mark a conversation read",
        description:
          "Sends WhatsApp a read receipt for the conversation's latest inbound message (the customer sees blue ticks on it and the ones before) and sets that message's `read_at`. Idempotent: a message already read is not sent again; with no inbound message nothing is sent (`message_id: null`). 409 `conflict` when the channel is disabled; 502 `whatsapp_provider_error` when WhatsApp refuses or does not answer (nothing recorded: call again). Needs `messages:send`."
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/conversations")
  .annotateMerge(
    OpenApi.annotations({
      title: "Conversations",
      description: "One WhatsApp thread per channel and lead (docs/contract-messaging.md §4)."
    })
  ) {}

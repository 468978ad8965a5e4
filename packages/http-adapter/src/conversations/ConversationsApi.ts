import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Conversation, ListQueryFields } from "@leadline/core/conversations/Conversation"
import { Message } from "@leadline/core/messages/Message"
import { Meta, PageQueryFields } from "@leadline/core/Pagination"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Forbidden, NotFound } from "../WireErrors.ts"

export const ConversationList = Schema.Struct({ conversations: Schema.Array(Conversation), meta: Meta }).annotate({
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
      error: Forbidden
    }).annotateMerge(
      OpenApi.annotations({
        summary: "List conversations",
        description: `Latest activity first (\`last_message_at\` desc, then \`id\` desc); filters combine. ${READ}`
      })
    ),
    HttpApiEndpoint.get("get", "/:id", {
      params: ConversationId,
      success: Conversation,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Get a conversation", description: READ })),
    HttpApiEndpoint.get("messages", "/:id/messages", {
      params: ConversationId,
      query: PageQueryFields,
      success: MessageList,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({ summary: "List a conversation's messages", description: `Newest first. ${READ}` })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/conversations")
  .annotateMerge(
    OpenApi.annotations({
      title: "Conversations",
      description: "One WhatsApp thread per channel and lead (CONTRACT-MESSAGING §4)."
    })
  ) {}

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Message, SendToLead } from "@leadline/core/messages/Message"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import { SEND_ERRORS } from "../conversations/ConversationsApi.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Forbidden, NotFound } from "../WireErrors.ts"

export class MessagesApi extends HttpApiGroup.make("messages")
  .add(
    HttpApiEndpoint.get("get", "/:id", {
      params: { id: Id.annotate({ description: "A message id, `msg_…`" }) },
      success: Message,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({ summary: "Get a message", description: "Needs `conversations:read` or `messages:send`." })
    ),
    Idempotent.create("send", "/", { payload: SendToLead, success: Message, error: SEND_ERRORS }).annotateMerge(
      OpenApi.annotations({
        summary: "Send a message to a lead",
        description:
          "As a send in a conversation; the lead's conversation on the channel is found or made (`pending`). `channel_id` may be left out when the account has exactly one active channel. Needs `messages:send`."
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/messages")
  .annotateMerge(
    OpenApi.annotations({ title: "Messages", description: "Messages in and out (docs/contract-messaging.md §5)." })
  ) {}

import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { React } from "@leadline/core/messages/Interactive"
import { MediaNotStored } from "@leadline/core/Errors"
import { Message, SendToLead } from "@leadline/core/messages/Message"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import { SEND_ERRORS } from "../conversations/ConversationsApi.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import * as WireErrors from "../WireErrors.ts"
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
    HttpApiEndpoint.get("media", "/:id/media", {
      params: { id: Id.annotate({ description: "A message id, `msg_…`" }) },
      headers: {
        "if-none-match": Schema.optional(
          Schema.String.annotate({ description: "The `ETag` of an earlier read: 304 when the file is the same" })
        )
      },
      success: HttpApiSchema.StreamUint8Array({ contentType: "application/octet-stream" }).annotate({
        description: "The file's bytes, with its own `Content-Type`, `Content-Length` and `ETag` (its SHA-256)"
      }),
      error: [Forbidden, NotFound, WireErrors.of(MediaNotStored)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Get a message's file",
        description:
          "The bytes of an inbound image, audio, video, document or sticker, once kept (`media.state` is `stored`), or of an outbound file sent from an upload (`POST /api/v1/media`). 404 for an unknown message, one without a file, or one sent by `link`; 409 `media_not_stored` while an inbound file is `pending` or when it `failed`. Needs `conversations:read` or `messages:send`."
      })
    ),
    Idempotent.create("send", "/", { payload: SendToLead, success: Message, error: SEND_ERRORS }).annotateMerge(
      OpenApi.annotations({
        summary: "Send a message to a lead",
        description:
          "As a send in a conversation; the lead's conversation on the channel is found or made (`pending`). `channel_id` may be left out when the account has exactly one active channel. Needs `messages:send`."
      })
    ),
    Idempotent.create("react", "/:id/reactions", {
      params: { id: Id.annotate({ description: "The message reacted to, `msg_…`" }) },
      payload: React,
      success: Message,
      error: SEND_ERRORS
    }).annotateMerge(
      OpenApi.annotations({
        summary: "React to a message",
        description:
          "Queues a message of type `reaction` in the message's conversation (201, `status: queued`), with the emoji in `text` and the message in `reply_to`; `emoji: \"\"` takes the reaction back. A session message: only within 24 hours of the lead's last message (409 `customer_service_window_closed`). 409 `conflict` when the message has no WhatsApp id yet or is itself a reaction. Counts as a message. Needs `messages:send`."
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/messages")
  .annotateMerge(
    OpenApi.annotations({ title: "Messages", description: "Messages in and out (docs/contract-messaging.md §5)." })
  ) {}

import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Conversations } from "@leadline/core/conversations/Conversations"
import { Messages } from "@leadline/core/messages/Messages"
import { MessageTransport } from "@leadline/core/messages/MessageTransport"
import { ReadReceipts } from "@leadline/core/messages/ReadReceipts"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "conversations",
  Effect.fnUntraced(function* (handlers) {
    const conversations = yield* Conversations
    const messages = yield* Messages
    const receipts = yield* ReadReceipts
    // The transport the sender uses: a receipt goes to WhatsApp the same way.
    const transport = yield* MessageTransport
    return handlers
      .handle("list", ({ query: { limit, offset, ...filters } }) =>
        wire(conversations.list(filters, page({ limit, offset }))).pipe(Respond.ok)
      )
      .handle("get", ({ params }) => wire(conversations.get(params.id)).pipe(Respond.ok))
      .handle("update", ({ params, payload }) => wire(conversations.update(params.id, payload)).pipe(Respond.ok))
      .handle("messages", ({ params, query }) =>
        wire(messages.list(params.id, page(query), query.before)).pipe(Respond.ok)
      )
      .handle("send", ({ params, payload }) => wire(messages.send(params.id, payload)).pipe(Respond.created))
      .handle("read", ({ params }) =>
        wire(receipts.markRead(params.id).pipe(Effect.provideService(MessageTransport, transport))).pipe(Respond.ok)
      )
  })
)

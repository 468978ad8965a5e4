import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Messages } from "@leadline/core/messages/Messages"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "messages",
  Effect.fnUntraced(function* (handlers) {
    const messages = yield* Messages
    return handlers
      .handle("get", ({ params }) => wire(messages.get(params.id)).pipe(Respond.ok))
      .handle("send", ({ payload }) => wire(messages.sendToLead(payload)).pipe(Respond.created))
      .handle("react", ({ params, payload }) => wire(messages.react(params.id, payload)).pipe(Respond.created))
  })
)

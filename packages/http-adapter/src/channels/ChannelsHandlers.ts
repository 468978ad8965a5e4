import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Channels } from "@leadline/core/channels/Channels"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "channels",
  Effect.fnUntraced(function* (handlers) {
    const channels = yield* Channels
    return handlers
      .handle("list", ({ query }) => wire(channels.list(page(query))).pipe(Respond.ok))
      .handle("create", ({ payload }) => wire(channels.create(payload)).pipe(Respond.created))
      .handle("get", ({ params }) => wire(channels.get(params.id)).pipe(Respond.ok))
      .handle("update", ({ params, payload }) => wire(channels.update(params.id, payload)).pipe(Respond.ok))
  })
)

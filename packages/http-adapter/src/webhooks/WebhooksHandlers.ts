import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { page } from "@leadline/core/Pagination"
import { Webhooks } from "@leadline/core/webhooks/Webhooks"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "webhooks",
  Effect.fnUntraced(function* (handlers) {
    const webhooks = yield* Webhooks
    return handlers
      .handle("register", ({ payload }) => wire(webhooks.register(payload)))
      .handle("listEndpoints", ({ query }) => wire(webhooks.listEndpoints(page(query))))
      .handle("updateEndpoint", ({ query, payload }) => wire(webhooks.update(query.id, payload)))
      .handle("deleteEndpoint", ({ query }) => wire(webhooks.remove(query.id)))
      .handle("listDeliveries", ({ query }) =>
        wire(webhooks.listDeliveries({ endpointId: query.endpoint_id, status: query.status }, page(query)))
      )
      .handle("redeliver", ({ query }) => wire(webhooks.redeliver(query.id)))
      .handle("rotateSecret", ({ query, payload }) => wire(webhooks.rotateSecret(query.id, payload)))
      .handle("recoverDeliveries", ({ query, payload }) => wire(webhooks.recover(query.id, payload)))
  })
)

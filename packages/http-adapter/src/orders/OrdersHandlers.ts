import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Orders } from "@leadline/core/orders/Orders"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "orders",
  Effect.fnUntraced(function* (handlers) {
    const orders = yield* Orders
    return handlers
      .handle("list", ({ query }) => {
        const { limit: _limit, offset: _offset, ...filter } = query
        return wire(orders.list(filter, page(query))).pipe(Respond.ok)
      })
      .handle("create", ({ payload }) => wire(orders.create(payload)).pipe(Respond.versioned(201)))
      .handle("get", ({ params }) => wire(orders.get(params.id)).pipe(Respond.versioned()))
      .handle("update", ({ params, headers, payload }) =>
        wire(orders.update(params.id, payload, headers["if-match"])).pipe(Respond.versioned())
      )
  })
)

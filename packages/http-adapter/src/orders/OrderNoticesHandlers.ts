import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OrderNotices } from "@leadline/core/orders/OrderNotices"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "orderNotices",
  Effect.fnUntraced(function* (handlers) {
    const notices = yield* OrderNotices
    return handlers
      .handle("get", () => wire(notices.settings()).pipe(Respond.ok))
      .handle("update", ({ payload }) => wire(notices.configure(payload)).pipe(Respond.ok))
  })
)

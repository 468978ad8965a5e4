import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AccountKeys } from "@leadline/core/keys/AccountKeys"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "keys",
  Effect.fnUntraced(function* (handlers) {
    const keys = yield* AccountKeys
    return handlers
      .handle("list", ({ query }) => wire(keys.list(page(query))).pipe(Respond.ok))
      .handle("create", ({ payload }) => wire(keys.create(payload)).pipe(Respond.created))
      .handle("setScopes", ({ params, payload }) =>
        wire(keys.setScopes(params.key_id, payload.scopes)).pipe(Respond.ok)
      )
      .handle("revoke", ({ params }) => wire(keys.revoke(params.key_id)).pipe(Respond.ok))
  })
)

import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Operator } from "@leadline/core/accounts/Operator"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "admin",
  Effect.fnUntraced(function* (handlers) {
    const operator = yield* Operator
    return handlers
      .handle("createAccount", ({ payload }) => operator.createAccount(payload))
      .handle("createUser", ({ params, payload }) => wire(operator.createUser(params.account_id, payload)))
      .handle("createKey", ({ params, payload }) => wire(operator.createKey(params.account_id, payload)))
      .handle("listKeys", ({ params }) => wire(Effect.map(operator.listKeys(params.account_id), (keys) => ({ keys }))))
      .handle("setScopes", ({ params, payload }) => wire(operator.setScopes(params.key_id, payload.scopes)))
      .handle("revokeKey", ({ params }) => wire(operator.revokeKey(params.key_id)))
  })
)

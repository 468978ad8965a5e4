import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Identity } from "@leadline/core/identity/Identity"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "identity",
  Effect.fnUntraced(function* (handlers) {
    const identity = yield* Identity
    return handlers
      .handle("me", () => identity.me.pipe(Respond.ok))
      .handle("usage", () => wire(identity.usage).pipe(Respond.ok))
      .handle("users", ({ query }) => identity.users(page(query)).pipe(Respond.ok))
  })
)

import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Catalogue } from "@leadline/core/catalogue/Catalogue"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "catalogue",
  Effect.fnUntraced(function* (handlers) {
    const catalogue = yield* Catalogue
    return handlers
      .handle("list", ({ query }) =>
        wire(
          catalogue.list(
            { active: query.active === undefined ? undefined : query.active === "true", sku: query.sku, q: query.q },
            page(query)
          )
        ).pipe(Respond.ok)
      )
      .handle("create", ({ payload }) => wire(catalogue.create(payload)).pipe(Respond.versioned(201)))
      .handle("get", ({ params }) => wire(catalogue.get(params.id)).pipe(Respond.versioned()))
      .handle("update", ({ params, headers, payload }) =>
        wire(catalogue.update(params.id, payload, headers["if-match"])).pipe(Respond.versioned())
      )
      .handle("delete", ({ params }) => wire(catalogue.remove(params.id)).pipe(Respond.ok))
  })
)

import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Leads } from "@leadline/core/leads/Leads"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "leads",
  Effect.fnUntraced(function* (handlers) {
    const leads = yield* Leads
    return handlers
      .handle("list", ({ query }) => wire(leads.list(query)).pipe(Respond.ok))
      .handle("create", ({ payload }) => wire(leads.create(payload)).pipe(Respond.created))
      .handle("get", ({ params }) => wire(leads.get(params.id)).pipe(Respond.ok))
      .handle("update", ({ params, payload }) => wire(leads.update(params.id, payload)).pipe(Respond.ok))
      .handle("delete", ({ params }) => wire(leads.remove(params.id)).pipe(Respond.ok))
  })
)

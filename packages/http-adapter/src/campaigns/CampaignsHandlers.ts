import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Campaigns } from "@leadline/core/campaigns/Campaigns"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "campaigns",
  Effect.fnUntraced(function* (handlers) {
    const campaigns = yield* Campaigns
    return handlers
      .handle("list", ({ query }) => wire(campaigns.list(page(query), query.status)).pipe(Respond.ok))
      .handle("create", ({ payload }) => wire(campaigns.create(payload)).pipe(Respond.created))
      .handle("get", ({ params }) => wire(campaigns.get(params.id)).pipe(Respond.ok))
      .handle("update", ({ params, payload }) => wire(campaigns.update(params.id, payload)).pipe(Respond.ok))
      .handle("delete", ({ params }) => wire(campaigns.remove(params.id)).pipe(Respond.ok))
      .handle("queue", ({ params }) => wire(campaigns.queue(params.id)).pipe(Respond.ok))
      .handle("cancel", ({ params }) => wire(campaigns.cancel(params.id)).pipe(Respond.ok))
      .handle("recipients", ({ params, query }) =>
        wire(campaigns.recipients(params.id, page(query), query.status)).pipe(Respond.ok)
      )
  })
)

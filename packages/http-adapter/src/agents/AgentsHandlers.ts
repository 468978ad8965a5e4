import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Agents } from "@leadline/core/agents/Agents"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "agents",
  Effect.fnUntraced(function* (handlers) {
    const agents = yield* Agents
    return handlers
      .handle("list", ({ query }) => wire(agents.list(page(query))).pipe(Respond.ok))
      .handle("create", ({ payload }) => wire(agents.create(payload)).pipe(Respond.versioned(201)))
      .handle("get", ({ params }) => wire(agents.get(params.id)).pipe(Respond.versioned()))
      .handle("update", ({ params, headers, payload }) =>
        wire(agents.update(params.id, payload, headers["if-match"])).pipe(Respond.versioned())
      )
      .handle("delete", ({ params }) => wire(agents.remove(params.id)).pipe(Respond.ok))
  })
)

import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Knowledge } from "@leadline/core/knowledge/Knowledge"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

/** `a,b , c` → `["a", "b", "c"]`; empty items are dropped. */
const commaList = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value
        .split(",")
        .map((id) => id.trim())
        .filter((id) => id.length > 0)

export const layer = HttpApiBuilder.group(
  Api,
  "knowledge",
  Effect.fnUntraced(function* (handlers) {
    const knowledge = yield* Knowledge
    return handlers
      .handle("list", ({ query }) => wire(knowledge.list({ status: query.status }, page(query))).pipe(Respond.ok))
      .handle("create", ({ payload }) => wire(knowledge.create(payload)).pipe(Respond.created))
      .handle("search", ({ query }) =>
        wire(
          knowledge.search({
            q: query.q,
            limit: query.limit,
            source_ids: commaList(query.source_ids),
            mode: query.mode
          })
        ).pipe(Respond.ok)
      )
      .handle("refresh", ({ params }) => wire(knowledge.refresh(params.id)).pipe(Respond.json(202)))
      .handle("get", ({ params }) => wire(knowledge.get(params.id)).pipe(Respond.ok))
      .handle("chunks", ({ params, query }) => wire(knowledge.chunks(params.id, page(query))).pipe(Respond.ok))
      .handle("update", ({ params, payload }) => wire(knowledge.update(params.id, payload)).pipe(Respond.ok))
      .handle("delete", ({ params }) => wire(knowledge.remove(params.id)).pipe(Respond.ok))
  })
)

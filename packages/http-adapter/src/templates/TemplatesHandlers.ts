import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { page } from "@leadline/core/Pagination"
import { TemplateGraph } from "@leadline/core/templates/TemplateGraph"
import { Templates } from "@leadline/core/templates/Templates"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "templates",
  Effect.fnUntraced(function* (handlers) {
    const templates = yield* Templates
    // Offered beside the message transport (the Cloud API's or the simulator's); absent when embedded without one.
    const graph = yield* Effect.serviceOption(TemplateGraph)
    const withGraph = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Option.isSome(graph) ? Effect.provideService(effect, TemplateGraph, graph.value) : effect
    return handlers
      .handle("list", ({ query }) => {
        const { limit, offset, ...filter } = query
        return wire(templates.list(filter, page({ limit, offset }))).pipe(Respond.ok)
      })
      .handle("create", ({ payload }) => wire(withGraph(templates.create(payload))).pipe(Respond.created))
      .handle("sync", () => wire(withGraph(templates.sync())).pipe(Respond.ok))
      .handle("get", ({ params }) => wire(templates.get(params.id)).pipe(Respond.ok))
      .handle("delete", ({ params }) => wire(withGraph(templates.remove(params.id))).pipe(Respond.ok))
  })
)

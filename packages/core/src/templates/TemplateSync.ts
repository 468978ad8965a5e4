import { Effect, Layer, Option } from "effect"
import * as Loop from "../internal/loop.ts"
import { TemplateGraph } from "./TemplateGraph.ts"
import { Templates } from "./Templates.ts"

/**
 * The scheduled sync (docs/contract-messaging.md §8.7): a round at start, then every
 * `intervalMillis`. Each WABA is claimed until its next round is due, so with several processes
 * each is synced once per interval, by one of them. Nothing runs in a process without a `TemplateGraph`.
 */
export const loop = (options: { readonly intervalMillis: number }) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const graph = yield* Effect.serviceOption(TemplateGraph)
      if (Option.isNone(graph)) return
      const templates = yield* Templates
      // A claim ends a second before the next round, so this process's own next round finds it free.
      const round = templates
        .syncDue(Math.max(1000, options.intervalMillis - 1000))
        .pipe(Effect.provideService(TemplateGraph, graph.value))
      yield* Loop.every("Syncing WhatsApp templates", options.intervalMillis, round)
    })
  )

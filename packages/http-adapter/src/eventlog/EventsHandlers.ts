import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Events } from "@leadline/core/eventlog/Events"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "events",
  Effect.fnUntraced(function* (handlers) {
    const events = yield* Events
    return handlers.handle("list", ({ query }) => wire(events.list(query)).pipe(Respond.ok))
  })
)

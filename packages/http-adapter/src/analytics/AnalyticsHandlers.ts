import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Analytics } from "@leadline/core/analytics/Analytics"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "analytics",
  Effect.fnUntraced(function* (handlers) {
    const analytics = yield* Analytics
    return handlers
      .handle("summary", ({ query }) => wire(analytics.summary(query)).pipe(Respond.ok))
      .handle("timeseries", ({ query }) => wire(analytics.timeseries(query)).pipe(Respond.ok))
  })
)

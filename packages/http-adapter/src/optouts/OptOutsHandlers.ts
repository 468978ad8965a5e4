import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OptOuts } from "@leadline/core/optouts/OptOuts"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "optOuts",
  Effect.fnUntraced(function* (handlers) {
    const optOuts = yield* OptOuts
    return handlers
      .handle("get", () => wire(optOuts.settings()).pipe(Respond.ok))
      .handle("update", ({ payload }) => wire(optOuts.configure(payload)).pipe(Respond.ok))
  })
)

import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Simulator } from "@leadline/core/ai/Simulator"
import { CurrentPrincipal } from "@leadline/core/auth/Principal"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as RateLimit from "../RateLimit.ts"
import * as Respond from "../Respond.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "ai",
  Effect.fnUntraced(function* (handlers) {
    const simulator = yield* Simulator
    const limit = yield* RateLimit.makeSimulation
    return handlers.handle("simulate", ({ payload }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        const decision = yield* limit(principal.keyId)
        if (decision._tag === "Refused") return decision.response
        return yield* wire(simulator.simulate(payload)).pipe(Respond.ok)
      })
    )
  })
)

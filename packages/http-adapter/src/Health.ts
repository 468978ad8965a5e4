import { Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { toResponse } from "./ErrorMapping.ts"
import { ServiceUnavailable } from "./WireErrors.ts"

/** Whether the stores answer; the server wiring says how to ask. */
export class Readiness extends Context.Service<Readiness, { readonly check: Effect.Effect<boolean> }>()(
  "leadline/Readiness"
) {
  static readonly always = Layer.succeed(Readiness, { check: Effect.succeed(true) })
}

const alive = HttpServerResponse.jsonUnsafe({ status: "ok" })
const ready = HttpServerResponse.jsonUnsafe({ status: "ready" })
const notReady = toResponse(new ServiceUnavailable({ error: "The database is unreachable; retry shortly" }))

/** `/healthz`: the process answers. `/readyz`: and its database does too. Neither needs a key. */
export const routes = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const readiness = yield* Readiness
    yield* router.add("GET", "/healthz", Effect.succeed(alive))
    yield* router.add(
      "GET",
      "/readyz",
      Effect.map(readiness.check, (ok) => (ok ? ready : notReady))
    )
  })
)

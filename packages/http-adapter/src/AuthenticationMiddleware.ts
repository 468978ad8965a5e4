import { Effect, Layer, Redacted } from "effect"
import { Authenticator } from "@leadline/core/auth/Authenticator"
import { CurrentPrincipal } from "@leadline/core/auth/Principal"
import { Authentication } from "./Authentication.ts"
import { wire } from "./ErrorMapping.ts"
import * as RateLimit from "./RateLimit.ts"
import { ResponseHeaders } from "./RequestEnvelope.ts"

/** The server side of `Authentication` (the definition is shared with the browser client). */
export const layer = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const authenticator = yield* Authenticator
    const limit = yield* RateLimit.make
    return Authentication.of({
      apiKey: (handler, { credential }) =>
        Effect.flatMap(wire(authenticator.authenticate(Redacted.value(credential))), (principal) => {
          const handled = Effect.provideService(handler, CurrentPrincipal, principal)
          if (limit === undefined) return handled
          return Effect.flatMap(limit(principal.keyId), (decision) => {
            if (decision._tag === "Refused") return Effect.succeed(decision.response)
            // Through the envelope, so that error answers (encoded further out) carry them too.
            return Effect.flatMap(ResponseHeaders, (headers) => {
              if (headers !== undefined) Object.assign(headers, decision.headers)
              return handled
            })
          })
        })
    })
  })
)

import { Effect, Layer, Redacted } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { Authenticator } from "@leadline/core/auth/Authenticator"
import { CurrentPrincipal } from "@leadline/core/auth/Principal"
import { wire } from "./ErrorMapping.ts"
import * as RateLimit from "./RateLimit.ts"
import { ResponseHeaders } from "./RequestEnvelope.ts"
import { RateLimited, Unauthorized } from "./WireErrors.ts"

/** Bearer API key authentication for every `/api` route, with the key's rate limit; provides the caller's principal. */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentPrincipal }>()(
  "leadline/Authentication",
  {
    security: {
      apiKey: HttpApiSecurity.bearer.pipe(
        HttpApiSecurity.annotate(
          OpenApi.Description,
          "An API key: `Authorization: Bearer lk_…`. Keys are issued through the operator API (`/admin/v1`)."
        )
      )
    },
    error: [Unauthorized, RateLimited]
  }
) {}

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

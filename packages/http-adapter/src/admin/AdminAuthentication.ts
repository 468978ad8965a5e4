import { createHash, timingSafeEqual } from "node:crypto"
import { Context, Effect, Layer, Redacted } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { Unauthorized } from "../WireErrors.ts"

/** The operator's token, from `LEADLINE_ADMIN_TOKEN` or the data directory (the server decides). */
export class AdminToken extends Context.Service<AdminToken, Redacted.Redacted<string>>()("leadline/AdminToken") {}

export class AdminAuthentication extends HttpApiMiddleware.Service<AdminAuthentication>()(
  "leadline/AdminAuthentication",
  {
    security: {
      adminToken: HttpApiSecurity.bearer.pipe(
        HttpApiSecurity.annotate(
          OpenApi.Description,
          "The operator token: `LEADLINE_ADMIN_TOKEN`, or the one the server wrote to its data directory."
        )
      )
    },
    error: Unauthorized
  }
) {}

const digest = (value: string) => createHash("sha256").update(value).digest()

export const layer = Layer.effect(
  AdminAuthentication,
  Effect.gen(function* () {
    const expected = digest(Redacted.value(yield* AdminToken))
    const unauthorized = new Unauthorized({ error: "Invalid or missing admin token" })
    return AdminAuthentication.of({
      // Comparing fixed-length digests keeps the check constant-time whatever was sent.
      adminToken: (handler, { credential }) =>
        timingSafeEqual(digest(Redacted.value(credential)), expected) ? handler : Effect.fail(unauthorized)
    })
  })
)

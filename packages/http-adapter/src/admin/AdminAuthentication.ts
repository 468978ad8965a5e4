import { Context, type Redacted } from "effect"
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

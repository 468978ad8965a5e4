import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { CurrentPrincipal } from "@leadline/core/auth/Principal"
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

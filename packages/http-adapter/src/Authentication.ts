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
          "An API key: `Authorization: Bearer lk_…`. The operator issues an account's first key (`/admin/v1`); a full-access key issues more (`/api/keys`) and the dashboard does too."
        )
      )
    },
    error: [Unauthorized, RateLimited]
  }
) {}

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Me, Usage, UserList } from "@leadline/core/identity/Identity"
import { PageQueryFields } from "@leadline/core/Pagination"
import { Authentication } from "../Authentication.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Forbidden } from "../WireErrors.ts"

export class IdentityApi extends HttpApiGroup.make("identity")
  .add(
    HttpApiEndpoint.get("me", "/api/me", { success: Me }).annotateMerge(
      OpenApi.annotations({
        summary: "Introspect the API key",
        description:
          "The caller's identity, the key's scopes as given, and the effective permissions they grant (sorted). Any valid key may call it."
      })
    ),
    HttpApiEndpoint.get("usage", "/api/usage", { success: Usage, error: Forbidden }).annotateMerge(
      OpenApi.annotations({
        summary: "Usage and subscription",
        description: "Messages sent this calendar month (UTC) against the plan's limit. Needs `analytics:read`."
      })
    ),
    HttpApiEndpoint.get("users", "/api/users", { query: PageQueryFields, success: UserList }).annotateMerge(
      OpenApi.annotations({
        summary: "List the account's users",
        description:
          "Whom a lead or conversation may be assigned to (`assigned_user_id`): oldest first, the owner leading. Any valid key may call it."
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .annotateMerge(
    OpenApi.annotations({
      title: "Identity",
      description: "Who the key belongs to, what it may use, and the account's users."
    })
  ) {}

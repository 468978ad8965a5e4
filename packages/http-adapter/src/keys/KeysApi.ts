import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ApiKeyList, CreatedOwnKey, CreateOwnKey, SECRET_FIELD } from "@leadline/core/keys/AccountKeys"
import { KeySummary, RevokedKey, SetScopes } from "@leadline/core/auth/ApiKey"
import { PageQueryFields } from "@leadline/core/Pagination"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Conflict, Forbidden, NotFound, ValidationError } from "../WireErrors.ts"

const KeyId = { key_id: Id.annotate({ description: "An API key id, `key_…`" }) }

const FULL_ACCESS = "Needs a full-access key (one with no scopes)."

export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/", { query: PageQueryFields, success: ApiKeyList, error: Forbidden }).annotateMerge(
      OpenApi.annotations({
        summary: "List the account's API keys",
        description: `Newest first (\`created_at\` desc, then \`id\` desc), revoked keys included with their \`revoked_at\`. Never the keys themselves. ${FULL_ACCESS}`
      })
    ),
    Idempotent.create("create", "/", {
      payload: CreateOwnKey,
      success: CreatedOwnKey,
      error: [Forbidden, ValidationError],
      // Keys are stored only as hashes: the idempotency record does not keep the key either.
      withheld: [SECRET_FIELD]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Issue an API key",
        description: `A key of the calling key's user; no \`scopes\` means full access. \`api_key\` is shown only in this answer: an idempotent replay answers the same body with \`api_key\` null (the key is shown once; revoke it and create another if the first answer was lost). ${FULL_ACCESS}`
      })
    ),
    HttpApiEndpoint.patch("setScopes", "/:key_id", {
      params: KeyId,
      payload: SetScopes,
      success: KeySummary,
      error: [Forbidden, NotFound, Conflict, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Change a key's scopes",
        description: `Takes effect on the key's next request; an empty list makes it a full-access key. A revoked key is 409 \`conflict\`. ${FULL_ACCESS}`
      })
    ),
    HttpApiEndpoint.delete("revoke", "/:key_id", {
      params: KeyId,
      success: RevokedKey,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Revoke a key",
        description: `The key gets 401 from its next request on. Revoking a revoked key answers the same. A key may revoke itself. ${FULL_ACCESS}`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/keys")
  .annotateMerge(
    OpenApi.annotations({
      title: "API keys",
      description:
        "The account's own API keys, managed with a full-access key: shown once, stored only as a SHA-256 hash."
    })
  ) {}

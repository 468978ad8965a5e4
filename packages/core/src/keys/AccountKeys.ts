import { Context, Effect, Layer, Schema } from "effect"
import { Conflict, NotFound, type PermissionDenied } from "../Errors.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import { type ApiKey, KeyName, KeySummary, type RevokedKey, summarize } from "../auth/ApiKey.ts"
import { ApiKeysRepo } from "../auth/ApiKeysRepo.ts"
import { KeyIssuer } from "../auth/KeyIssuer.ts"
import { authorizeFullAccess, type CurrentPrincipal } from "../auth/Principal.ts"
import * as Scopes from "../auth/Scopes.ts"

/** `POST /api/keys`: the key is the caller's user's; no scopes is full access. */
export const CreateOwnKey = Schema.Struct({
  name: Schema.optional(KeyName),
  scopes: Schema.optional(Scopes.ScopeList)
}).annotate({ identifier: "CreateApiKey" })
export type CreateOwnKey = typeof CreateOwnKey.Type

/** The new key's summary and the key itself, which is shown only in this answer. */
export const CreatedOwnKey = Schema.Struct({
  ...KeySummary.fields,
  api_key: Schema.NullOr(Schema.String).annotate({
    description:
      "The key (`lk_…`), shown only in this answer. null on an idempotent replay: the key is shown once; revoke it and create another if the first answer was lost."
  })
}).annotate({ identifier: "CreatedApiKey" })
export type CreatedOwnKey = typeof CreatedOwnKey.Type

/** The field of `CreatedOwnKey` that an idempotency record must not keep (keys are stored only as hashes). */
export const SECRET_FIELD = "api_key"

export const ApiKeyList = Schema.Struct({ keys: Schema.Array(KeySummary), meta: Pagination.Meta }).annotate({
  identifier: "ApiKeyList"
})
export type ApiKeyList = typeof ApiKeyList.Type

type Needs = CurrentPrincipal

/**
 * An account's own API keys, managed with one of its full-access keys (`/api/keys`): the same
 * keys, issued and changed the same way (`KeyIssuer`), as the operator's `/admin/v1` routes,
 * but only within the caller's account and for the caller's user. No scope grants this, and it
 * has no permission of its own (`/api/me`'s list is the contract's): a scoped key gets 403.
 */
export class AccountKeys extends Context.Service<
  AccountKeys,
  {
    readonly list: (page: Pagination.Page) => Effect.Effect<ApiKeyList, PermissionDenied, Needs>
    readonly create: (input: CreateOwnKey) => Effect.Effect<CreatedOwnKey, PermissionDenied, Needs>
    readonly setScopes: (
      keyId: string,
      scopes: ReadonlyArray<Scopes.Scope>
    ) => Effect.Effect<KeySummary, PermissionDenied | NotFound | Conflict, Needs>
    /** Revoking a revoked key answers as the first revocation did. A key may revoke itself. */
    readonly revoke: (keyId: string) => Effect.Effect<RevokedKey, PermissionDenied | NotFound, Needs>
  }
>()("core/AccountKeys") {
  static readonly layer = Layer.effect(
    AccountKeys,
    Effect.gen(function* () {
      const keys = yield* ApiKeysRepo
      const issuer = yield* KeyIssuer

      /** The caller's account's key; another account's answers as one never issued. */
      const requireOwn = (accountId: string, keyId: string) =>
        Effect.flatMap(
          keys.find(keyId),
          (key): Effect.Effect<ApiKey, NotFound> =>
            key === undefined || key.accountId !== accountId
              ? Effect.fail(new NotFound({ resource: "api key", id: keyId }))
              : Effect.succeed(key)
        )

      const list = Effect.fnUntraced(function* (page: Pagination.Page) {
        const principal = yield* authorizeFullAccess
        const slice = yield* keys.pageByAccount(principal.accountId, page)
        return { keys: slice.items.map(summarize), meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("AccountKeys.list"))

      const create = Effect.fnUntraced(function* (input: CreateOwnKey) {
        const principal = yield* authorizeFullAccess
        const { record, apiKey } = yield* issuer.issue(
          principal.accountId,
          principal.userId,
          input.name ?? "",
          input.scopes ?? []
        )
        return { ...summarize(record), api_key: apiKey }
      }, Tracing.span("AccountKeys.create"))

      const setScopes = Effect.fnUntraced(function* (keyId: string, scopes: ReadonlyArray<Scopes.Scope>) {
        const principal = yield* authorizeFullAccess
        const key = yield* requireOwn(principal.accountId, keyId)
        if (key.revokedAt !== null) return yield* new Conflict({ message: `API key ${keyId} is revoked` })
        return summarize(yield* issuer.setScopes(key, scopes))
      }, Tracing.span("AccountKeys.setScopes"))

      const revoke = Effect.fnUntraced(function* (keyId: string) {
        const principal = yield* authorizeFullAccess
        yield* issuer.revoke(yield* requireOwn(principal.accountId, keyId))
        return { id: keyId, revoked: true }
      }, Tracing.span("AccountKeys.revoke"))

      return AccountKeys.of({ list, create, setScopes, revoke })
    })
  )
}

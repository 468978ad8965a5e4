import { Context, Effect, Layer } from "effect"
import * as Ids from "../Ids.ts"
import * as Tracing from "../Tracing.ts"
import type { ApiKey } from "./ApiKey.ts"
import { ApiKeyCache } from "./ApiKeyCache.ts"
import * as ApiKeyCredential from "./ApiKeyCredential.ts"
import { ApiKeysRepo } from "./ApiKeysRepo.ts"
import type * as Scopes from "./Scopes.ts"

/**
 * What making and changing an API key is, whoever asks: the operator (`Operator`) or an
 * account's own full-access key (`AccountKeys`). Callers decide who may; this issues the
 * key (shown once, stored as its hash), and makes a scope change or a revocation hold
 * from the key's next request (this server's cache at once, the others' when the store
 * announces the change).
 */
export class KeyIssuer extends Context.Service<
  KeyIssuer,
  {
    /** A new key of the user; `apiKey` is the secret, which nothing keeps. */
    readonly issue: (
      accountId: string,
      userId: string,
      name: string,
      scopes: ReadonlyArray<Scopes.Scope>
    ) => Effect.Effect<{ readonly record: ApiKey; readonly apiKey: string }>
    /** The key with its new scopes. */
    readonly setScopes: (key: ApiKey, scopes: ReadonlyArray<Scopes.Scope>) => Effect.Effect<ApiKey>
    /** Revokes the key; a revoked key stays revoked as it was. */
    readonly revoke: (key: ApiKey) => Effect.Effect<void>
  }
>()("core/KeyIssuer") {
  static readonly layer = Layer.effect(
    KeyIssuer,
    Effect.gen(function* () {
      const keys = yield* ApiKeysRepo
      const cache = yield* ApiKeyCache

      const issue = Effect.fnUntraced(function* (
        accountId: string,
        userId: string,
        name: string,
        scopes: ReadonlyArray<Scopes.Scope>
      ) {
        const apiKey = yield* ApiKeyCredential.generate
        const record: ApiKey = {
          id: yield* Ids.make("key"),
          accountId,
          userId,
          name,
          scopes,
          hash: yield* ApiKeyCredential.hash(apiKey),
          prefix: ApiKeyCredential.visiblePrefix(apiKey),
          createdAt: yield* Ids.now,
          revokedAt: null
        }
        yield* keys.insert(record)
        return { record, apiKey }
      }, Tracing.span("KeyIssuer.issue"))

      const setScopes = Effect.fnUntraced(function* (key: ApiKey, scopes: ReadonlyArray<Scopes.Scope>) {
        yield* keys.setScopes(key.id, scopes)
        // This server forgets the key at once; the others when the store announces the change.
        yield* cache.clear
        return { ...key, scopes }
      }, Tracing.span("KeyIssuer.setScopes"))

      const revoke = Effect.fnUntraced(function* (key: ApiKey) {
        if (key.revokedAt === null) yield* keys.revoke(key.id, yield* Ids.now)
        yield* cache.clear
      }, Tracing.span("KeyIssuer.revoke"))

      return KeyIssuer.of({ issue, setScopes, revoke })
    })
  )
}

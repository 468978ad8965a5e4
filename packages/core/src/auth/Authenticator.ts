import { Context, Effect, Layer } from "effect"
import { ApiKeyCache } from "./ApiKeyCache.ts"
import { ApiKeysRepo } from "./ApiKeysRepo.ts"
import { Unauthenticated } from "../Errors.ts"
import * as ApiKeyCredential from "./ApiKeyCredential.ts"
import type { Principal } from "./Principal.ts"
import * as Tracing from "../Tracing.ts"

/** Turns a presented API key into the principal it stands for. */
export class Authenticator extends Context.Service<
  Authenticator,
  {
    readonly authenticate: (apiKey: string) => Effect.Effect<Principal, Unauthenticated>
  }
>()("core/Authenticator") {
  static readonly layer = Layer.effect(
    Authenticator,
    Effect.gen(function* () {
      const keys = yield* ApiKeysRepo
      const cache = yield* ApiKeyCache
      const missing = new Unauthenticated({ reason: "missing" })
      const malformed = new Unauthenticated({ reason: "malformed" })
      const unknown = new Unauthenticated({ reason: "unknown" })
      const revoked = new Unauthenticated({ reason: "revoked" })
      // Written without a generator: it runs on every authenticated request.
      const authenticate = (apiKey: string): Effect.Effect<Principal, Unauthenticated> => {
        if (apiKey === "") return Effect.fail(missing)
        if (!ApiKeyCredential.isWellFormed(apiKey)) return Effect.fail(malformed)
        return Effect.flatMap(
          Effect.flatMap(ApiKeyCredential.hash(apiKey), (hash) => cache.lookup(hash, keys.findGrantByHash(hash))),
          (grant) => {
            if (grant === undefined) return Effect.fail(unknown)
            if (grant.key.revokedAt !== null) return Effect.fail(revoked)
            return Effect.succeed({
              accountId: grant.key.accountId,
              userId: grant.key.userId,
              ownerUserId: grant.ownerUserId,
              role: grant.role,
              keyId: grant.key.id,
              scopes: grant.key.scopes
            } satisfies Principal)
          }
        ).pipe(Tracing.span("Authenticator.authenticate"))
      }
      return Authenticator.of({ authenticate })
    })
  )
}

import { Context, Effect, Layer } from "effect"
import { ApiKeysRepo } from "../accounts/AccountsRepo.ts"
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
      const authenticate = Effect.fnUntraced(function* (apiKey: string) {
        if (apiKey === "") return yield* new Unauthenticated({ reason: "missing" })
        if (!ApiKeyCredential.isWellFormed(apiKey)) return yield* new Unauthenticated({ reason: "malformed" })
        const grant = yield* keys.findGrantByHash(yield* ApiKeyCredential.hash(apiKey))
        if (grant === undefined) return yield* new Unauthenticated({ reason: "unknown" })
        if (grant.key.revokedAt !== null) return yield* new Unauthenticated({ reason: "revoked" })
        return {
          accountId: grant.key.accountId,
          userId: grant.key.userId,
          ownerUserId: grant.ownerUserId,
          role: grant.role,
          keyId: grant.key.id,
          scopes: grant.key.scopes
        } satisfies Principal
      }, Tracing.span("Authenticator.authenticate"))
      return Authenticator.of({ authenticate })
    })
  )
}

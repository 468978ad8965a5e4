import { Context, Effect, Layer, Schema } from "effect"
import { authorize, CurrentPrincipal } from "../auth/Principal.ts"
import * as Scopes from "../auth/Scopes.ts"
import type { PermissionDenied } from "../Errors.ts"
import { PlanId, Role } from "../accounts/Account.ts"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import * as Tracing from "../Tracing.ts"
import { MessageUsage } from "../usage/MessageUsage.ts"
import { MonthlyUsage, monthlyUsage } from "../usage/MonthlyUsage.ts"

export const Me = Schema.Struct({
  account: Schema.Struct({
    user_id: Schema.String,
    owner_user_id: Schema.String,
    role: Role,
    is_owner: Schema.Boolean,
    auth_type: Schema.Literal("api_key")
  }),
  scopes: Schema.Array(Scopes.Scope),
  permissions: Schema.Array(Schema.String)
}).annotate({ identifier: "Me" })

export const Usage = Schema.Struct({
  usage: MonthlyUsage,
  subscription: Schema.Struct({ plan_id: PlanId, status: Schema.Literal("active") })
}).annotate({ identifier: "Usage" })

/** Start of the current calendar month, UTC. */
/** What the caller may learn about itself: `/api/me` and `/api/usage`. */
export class Identity extends Context.Service<
  Identity,
  {
    readonly me: Effect.Effect<typeof Me.Type, never, CurrentPrincipal>
    readonly usage: Effect.Effect<typeof Usage.Type, PermissionDenied, CurrentPrincipal>
  }
>()("core/Identity") {
  static readonly layer = Layer.effect(
    Identity,
    Effect.gen(function* () {
      const accounts = yield* AccountsRepo
      const messageUsage = yield* MessageUsage

      const me = Effect.map(CurrentPrincipal, (principal) => ({
        account: {
          user_id: principal.userId,
          owner_user_id: principal.ownerUserId,
          role: principal.role,
          is_owner: principal.userId === principal.ownerUserId,
          auth_type: "api_key" as const
        },
        scopes: principal.scopes,
        permissions: Scopes.permissionsOf(principal.scopes)
      }))

      const usage = Effect.gen(function* () {
        const principal = yield* authorize("analytics.view")
        const account = yield* accounts.findAccount(principal.accountId)
        // The key's account exists as long as the key does; a miss here is a broken store.
        if (account === undefined) return yield* Effect.die(new Error(`account ${principal.accountId} vanished`))
        return {
          usage: yield* monthlyUsage(messageUsage, account),
          subscription: { plan_id: account.planId, status: account.subscriptionStatus }
        }
      }).pipe(Tracing.span("Identity.usage"))

      return Identity.of({ me, usage })
    })
  )
}

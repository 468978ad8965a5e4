import { Context, Effect, Layer, Schema } from "effect"
import { authorize, CurrentPrincipal } from "../auth/Principal.ts"
import * as Scopes from "../auth/Scopes.ts"
import type { PermissionDenied } from "../Errors.ts"
import { AccountUser, accountUser, PlanId, Role } from "../accounts/Account.ts"
import * as Pagination from "../Pagination.ts"
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

/** The account's users, whom a lead or a conversation may be assigned to. */
export const UserList = Schema.Struct({ users: Schema.Array(AccountUser), meta: Pagination.Meta }).annotate({
  identifier: "UserList"
})

/** What the caller may learn about itself and its account: `/api/me`, `/api/usage` and `/api/users`. */
export class Identity extends Context.Service<
  Identity,
  {
    readonly me: Effect.Effect<typeof Me.Type, never, CurrentPrincipal>
    readonly usage: Effect.Effect<typeof Usage.Type, PermissionDenied, CurrentPrincipal>
    /** Oldest first, the owner leading; any key of the account may read them (ids and roles only). */
    readonly users: (page: Pagination.Page) => Effect.Effect<typeof UserList.Type, never, CurrentPrincipal>
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

      // An account's users are few (the operator adds them one at a time): read whole, then paged.
      const users = (page: Pagination.Page) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          const all = yield* accounts.listUsers(principal.accountId)
          return {
            users: all.slice(page.offset, page.offset + page.limit).map(accountUser),
            meta: Pagination.meta(page, all.length)
          }
        }).pipe(Tracing.span("Identity.users"))

      return Identity.of({ me, usage, users })
    })
  )
}

import { Context, Effect, Layer, Schema } from "effect"
import { KeyName, type KeySummary, type RevokedKey, summarize } from "../auth/ApiKey.ts"
import { ApiKeysRepo } from "../auth/ApiKeysRepo.ts"
import { KeyIssuer } from "../auth/KeyIssuer.ts"
import * as Scopes from "../auth/Scopes.ts"
import { NotFound } from "../Errors.ts"
import * as Ids from "../Ids.ts"
import { Text } from "../Text.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import {
  type Account,
  AccountName,
  AccountUser,
  accountUser,
  DEFAULT_PLAN,
  MemberRole,
  PlanId
} from "../accounts/Account.ts"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import * as Pagination from "../Pagination.ts"
import { MessageUsage } from "../usage/MessageUsage.ts"
import { MonthlyUsage, monthlyUsage } from "../usage/MonthlyUsage.ts"

export const CreateAccount = Schema.Struct({ name: AccountName, plan_id: Schema.optional(PlanId) })
export const CreatedAccount = Schema.Struct({
  account_id: Schema.String,
  owner_user_id: Schema.String,
  api_key: Schema.String
})

export const CreateUser = Schema.Struct({ role: MemberRole })
export const CreatedUser = Schema.Struct({ user_id: Schema.String, role: MemberRole })

export const CreateKey = Schema.Struct({
  name: Schema.optional(KeyName),
  scopes: Schema.optional(Scopes.ScopeList),
  user_id: Schema.optional(Text)
})
export const CreatedKey = Schema.Struct({ id: Schema.String, api_key: Schema.String, scopes: Scopes.ScopeList })

export const SetPlan = Schema.Struct({ plan_id: PlanId })
export const AccountPlan = Schema.Struct({ account_id: Schema.String, plan_id: PlanId })

/** An account as the operator lists it. */
export const AccountSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  plan_id: PlanId,
  subscription_status: Schema.Literal("active"),
  owner_user_id: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "AccountSummary" })
export type AccountSummary = typeof AccountSummary.Type

export const AccountList = Schema.Struct({
  accounts: Schema.Array(AccountSummary),
  meta: Pagination.Meta
}).annotate({ identifier: "AccountList" })
export type AccountList = typeof AccountList.Type

/** One account for the operator: its summary, its users (oldest first) and this month's usage. */
export const AccountDetail = Schema.Struct({
  ...AccountSummary.fields,
  users: Schema.Array(AccountUser),
  usage: MonthlyUsage
}).annotate({ identifier: "AccountDetail" })
export type AccountDetail = typeof AccountDetail.Type

const accountSummary = (account: Account): AccountSummary => ({
  id: account.id,
  name: account.name,
  plan_id: account.planId,
  subscription_status: account.subscriptionStatus,
  owner_user_id: account.ownerUserId,
  created_at: account.createdAt
})

/**
 * The platform operator's side: accounts, users, plans and API keys. Callers
 * are trusted (the transport checks the admin token), so there is no scope check.
 */
export class Operator extends Context.Service<
  Operator,
  {
    readonly createAccount: (input: typeof CreateAccount.Type) => Effect.Effect<typeof CreatedAccount.Type>
    readonly createUser: (
      accountId: string,
      input: typeof CreateUser.Type
    ) => Effect.Effect<typeof CreatedUser.Type, NotFound>
    readonly createKey: (
      accountId: string,
      input: typeof CreateKey.Type
    ) => Effect.Effect<typeof CreatedKey.Type, NotFound>
    readonly listKeys: (accountId: string) => Effect.Effect<ReadonlyArray<typeof KeySummary.Type>, NotFound>
    readonly setScopes: (
      keyId: string,
      scopes: ReadonlyArray<Scopes.Scope>
    ) => Effect.Effect<typeof KeySummary.Type, NotFound>
    readonly revokeKey: (keyId: string) => Effect.Effect<typeof RevokedKey.Type, NotFound>
    readonly listAccounts: (page: Pagination.Page) => Effect.Effect<AccountList>
    readonly getAccount: (accountId: string) => Effect.Effect<AccountDetail, NotFound>
    /** The next send is held to the new plan's limit (docs/contract-messaging.md §0a.7). */
    readonly setPlan: (accountId: string, planId: PlanId) => Effect.Effect<typeof AccountPlan.Type, NotFound>
  }
>()("core/Operator") {
  static readonly layer = Layer.effect(
    Operator,
    Effect.gen(function* () {
      const accounts = yield* AccountsRepo
      const keys = yield* ApiKeysRepo
      const issuer = yield* KeyIssuer
      const transactor = yield* Transactor
      const messageUsage = yield* MessageUsage

      const requireAccount = (accountId: string) =>
        Effect.flatMap(accounts.findAccount(accountId), (account) =>
          account === undefined
            ? Effect.fail(new NotFound({ resource: "account", id: accountId }))
            : Effect.succeed(account)
        )

      const requireKey = (keyId: string) =>
        Effect.flatMap(keys.find(keyId), (key) =>
          key === undefined ? Effect.fail(new NotFound({ resource: "api key", id: keyId })) : Effect.succeed(key)
        )

      const createAccount = Effect.fnUntraced(function* (input: typeof CreateAccount.Type) {
        const createdAt = yield* Ids.now
        const account: Account = {
          id: yield* Ids.uuid,
          name: input.name,
          ownerUserId: yield* Ids.uuid,
          planId: input.plan_id ?? DEFAULT_PLAN,
          subscriptionStatus: "active",
          createdAt
        }
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            yield* accounts.insertAccount(account, {
              id: account.ownerUserId,
              accountId: account.id,
              role: "owner",
              createdAt
            })
            const { apiKey } = yield* issuer.issue(account.id, account.ownerUserId, "owner key", [])
            return { account_id: account.id, owner_user_id: account.ownerUserId, api_key: apiKey }
          })
        )
      }, Tracing.span("Operator.createAccount"))

      const createUser = Effect.fnUntraced(function* (accountId: string, input: typeof CreateUser.Type) {
        yield* requireAccount(accountId)
        const user = { id: yield* Ids.uuid, accountId, role: input.role, createdAt: yield* Ids.now }
        yield* accounts.insertUser(user)
        return { user_id: user.id, role: input.role }
      }, Tracing.span("Operator.createUser"))

      const createKey = Effect.fnUntraced(function* (accountId: string, input: typeof CreateKey.Type) {
        const account = yield* requireAccount(accountId)
        const userId = input.user_id ?? account.ownerUserId
        if ((yield* accounts.findUser(accountId, userId)) === undefined) {
          return yield* new NotFound({ resource: "user", id: userId })
        }
        const scopes = input.scopes ?? []
        const { record, apiKey } = yield* issuer.issue(accountId, userId, input.name ?? "", scopes)
        return { id: record.id, api_key: apiKey, scopes }
      }, Tracing.span("Operator.createKey"))

      const listKeys = Effect.fnUntraced(function* (accountId: string) {
        yield* requireAccount(accountId)
        return (yield* keys.listByAccount(accountId)).map(summarize)
      }, Tracing.span("Operator.listKeys"))

      const setScopes = Effect.fnUntraced(function* (keyId: string, scopes: ReadonlyArray<Scopes.Scope>) {
        return summarize(yield* issuer.setScopes(yield* requireKey(keyId), scopes))
      }, Tracing.span("Operator.setScopes"))

      const revokeKey = Effect.fnUntraced(function* (keyId: string) {
        yield* issuer.revoke(yield* requireKey(keyId))
        return { id: keyId, revoked: true }
      }, Tracing.span("Operator.revokeKey"))

      const listAccounts = Effect.fnUntraced(function* (page: Pagination.Page) {
        const slice = yield* accounts.pageAccounts(page)
        return { accounts: slice.items.map(accountSummary), meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Operator.listAccounts"))

      const getAccount = Effect.fnUntraced(function* (accountId: string) {
        const account = yield* requireAccount(accountId)
        const users = yield* accounts.listUsers(accountId)
        return {
          ...accountSummary(account),
          users: users.map(accountUser),
          usage: yield* monthlyUsage(messageUsage, account)
        }
      }, Tracing.span("Operator.getAccount"))

      const setPlan = Effect.fnUntraced(function* (accountId: string, planId: PlanId) {
        if (!(yield* accounts.setPlan(accountId, planId))) {
          return yield* new NotFound({ resource: "account", id: accountId })
        }
        return { account_id: accountId, plan_id: planId }
      }, Tracing.span("Operator.setPlan"))

      return Operator.of({
        createAccount,
        createUser,
        createKey,
        listKeys,
        setScopes,
        revokeKey,
        listAccounts,
        getAccount,
        setPlan
      })
    })
  )
}

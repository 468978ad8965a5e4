import { Context, type Effect } from "effect"
import type * as Scopes from "../auth/Scopes.ts"
import type { Account, ApiKey, ApiKeyGrant, User } from "./Account.ts"

/** Accounts, their users and subscriptions. */
export class AccountsRepo extends Context.Service<
  AccountsRepo,
  {
    /** Creates the account together with its owner user. */
    readonly insertAccount: (account: Account, owner: User) => Effect.Effect<void>
    readonly findAccount: (accountId: string) => Effect.Effect<Account | undefined>
    readonly insertUser: (user: User) => Effect.Effect<void>
    readonly findUser: (accountId: string, userId: string) => Effect.Effect<User | undefined>
    /** Messages the account sent at or after `since` (ISO time). */
    readonly countMessagesSentSince: (accountId: string, since: string) => Effect.Effect<number>
  }
>()("core/AccountsRepo") {}

export class ApiKeysRepo extends Context.Service<
  ApiKeysRepo,
  {
    readonly insert: (key: ApiKey) => Effect.Effect<void>
    readonly findGrantByHash: (hash: string) => Effect.Effect<ApiKeyGrant | undefined>
    readonly find: (keyId: string) => Effect.Effect<ApiKey | undefined>
    readonly listByAccount: (accountId: string) => Effect.Effect<ReadonlyArray<ApiKey>>
    readonly setScopes: (keyId: string, scopes: ReadonlyArray<Scopes.Scope>) => Effect.Effect<void>
    readonly revoke: (keyId: string, at: string) => Effect.Effect<void>
  }
>()("core/ApiKeysRepo") {}

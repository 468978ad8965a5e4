import { Context, type Effect } from "effect"
import type { Account, User } from "./Account.ts"

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

import { Context, type Effect } from "effect"
import type { Listed, Page } from "../Pagination.ts"
import type { Account, PlanId, User } from "./Account.ts"

/** Accounts, their users and subscriptions. */
export class AccountsRepo extends Context.Service<
  AccountsRepo,
  {
    /** Creates the account together with its owner user. */
    readonly insertAccount: (account: Account, owner: User) => Effect.Effect<void>
    readonly findAccount: (accountId: string) => Effect.Effect<Account | undefined>
    /** A page of every account, newest first (`createdAt` desc, then `id` desc): the operator's listing. */
    readonly pageAccounts: (page: Page) => Effect.Effect<Listed<Account>>
    /** Moves the account to another plan; false when there is no such account. */
    readonly setPlan: (accountId: string, planId: PlanId) => Effect.Effect<boolean>
    readonly insertUser: (user: User) => Effect.Effect<void>
    readonly findUser: (accountId: string, userId: string) => Effect.Effect<User | undefined>
    /** The account's users, oldest first (`createdAt`, then `id`): the owner, made with the account, leads. */
    readonly listUsers: (accountId: string) => Effect.Effect<ReadonlyArray<User>>
  }
>()("core/AccountsRepo") {}

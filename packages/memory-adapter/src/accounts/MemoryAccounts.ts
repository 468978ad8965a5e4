import { Effect, Layer } from "effect"
import type { Account, User } from "@leadline/core/accounts/Account"
import { AccountsRepo } from "@leadline/core/accounts/AccountsRepo"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

/** Accounts and their users. */
export const layer = Layer.sync(AccountsRepo)(() => {
  const accounts = MemoryTable.make({
    primaryKey: (account: Account) => account.id,
    // Every account under one key: the operator's listing, newest first.
    indexes: { all: () => "" },
    order: MemoryTable.newestFirst(
      (account: Account) => account.createdAt,
      (account) => account.id
    )
  })
  const users = MemoryTable.make({
    primaryKey: (user: User) => user.id,
    indexes: {
      account: {
        key: (user: User) => user.accountId,
        // Oldest first: the owner, made with the account, leads.
        order: MemoryTable.oldestFirst(
          (user: User) => user.createdAt,
          (user) => user.id
        )
      }
    }
  })

  return AccountsRepo.of({
    insertAccount: (account, owner) =>
      atomically((tx) => {
        accounts.insert(tx, account)
        users.insert(tx, owner)
      }),
    findAccount: (accountId) => Effect.sync(() => accounts.get(accountId)),
    pageAccounts: (page) => Effect.sync(() => accounts.page("all", "", page)),
    setPlan: (accountId, planId) =>
      atomically((tx) => {
        const account = accounts.get(accountId)
        if (account === undefined) return false
        accounts.update(tx, { ...account, planId })
        return true
      }),
    insertUser: (user) => atomically((tx) => users.insert(tx, user)),
    findUser: (accountId, userId) =>
      Effect.sync(() => {
        const user = users.get(userId)
        return user?.accountId === accountId ? user : undefined
      }),
    listUsers: (accountId) => Effect.sync(() => [...users.scan("account", accountId)])
  })
})

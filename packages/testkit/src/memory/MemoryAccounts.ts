import { Context, Effect, Layer } from "effect"
import type { Account, User } from "@leadline/core/accounts/Account"
import { AccountsRepo } from "@leadline/core/accounts/AccountsRepo"
import type { ApiKey } from "@leadline/core/auth/ApiKey"
import { ApiKeysRepo } from "@leadline/core/auth/ApiKeysRepo"
import { onRollback } from "./MemoryTransaction.ts"

/** Accounts, users and API keys in maps; the two ports share them, as two tables would. */
export const layer = Layer.effectContext(
  Effect.sync(() => {
    const accounts = new Map<string, Account>()
    const users = new Map<string, User>()
    const keys = new Map<string, ApiKey>()
    const keysByHash = new Map<string, string>()

    const putUser = (user: User) =>
      Effect.andThen(
        Effect.sync(() => users.set(user.id, user)),
        onRollback(() => users.delete(user.id))
      )

    const accountsRepo = AccountsRepo.of({
      insertAccount: (account, owner) =>
        Effect.andThen(
          Effect.sync(() => accounts.set(account.id, account)),
          Effect.andThen(
            onRollback(() => accounts.delete(account.id)),
            putUser(owner)
          )
        ),
      findAccount: (accountId) => Effect.sync(() => accounts.get(accountId)),
      insertUser: putUser,
      findUser: (accountId, userId) =>
        Effect.sync(() => {
          const user = users.get(userId)
          return user?.accountId === accountId ? user : undefined
        }),
      // Messages arrive with the conversations issue; until then none were sent.
      countMessagesSentSince: () => Effect.succeed(0)
    })

    const replaceKey = (keyId: string, change: (key: ApiKey) => ApiKey) =>
      Effect.flatMap(
        Effect.sync(() => keys.get(keyId)),
        (before) =>
          before === undefined
            ? Effect.void
            : Effect.andThen(
                Effect.sync(() => keys.set(keyId, change(before))),
                onRollback(() => keys.set(keyId, before))
              )
      )

    const apiKeysRepo = ApiKeysRepo.of({
      insert: (key) =>
        Effect.andThen(
          Effect.sync(() => {
            keys.set(key.id, key)
            keysByHash.set(key.hash, key.id)
          }),
          onRollback(() => {
            keys.delete(key.id)
            keysByHash.delete(key.hash)
          })
        ),
      findGrantByHash: (hash) =>
        Effect.sync(() => {
          const keyId = keysByHash.get(hash)
          const key = keyId === undefined ? undefined : keys.get(keyId)
          if (key === undefined) return undefined
          const user = users.get(key.userId)
          const account = accounts.get(key.accountId)
          if (user === undefined || account === undefined) return undefined
          return { key, role: user.role, ownerUserId: account.ownerUserId }
        }),
      find: (keyId) => Effect.sync(() => keys.get(keyId)),
      listByAccount: (accountId) => Effect.sync(() => [...keys.values()].filter((key) => key.accountId === accountId)),
      setScopes: (keyId, scopes) => replaceKey(keyId, (key) => ({ ...key, scopes })),
      revoke: (keyId, at) => replaceKey(keyId, (key) => ({ ...key, revokedAt: at }))
    })

    return Context.add(AccountsRepo.context(accountsRepo), ApiKeysRepo, apiKeysRepo)
  })
)

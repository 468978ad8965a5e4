import { Context, Effect, Layer, PubSub } from "effect"
import { AccountsRepo } from "@leadline/core/accounts/AccountsRepo"
import type { ApiKey, ApiKeyGrant } from "@leadline/core/auth/ApiKey"
import { ApiKeyChanges } from "@leadline/core/auth/ApiKeyChanges"
import { ApiKeysRepo } from "@leadline/core/auth/ApiKeysRepo"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

/**
 * API keys by id and by hash; the grant joins the key's user and account through
 * `AccountsRepo`. A change to a key is announced on `ApiKeyChanges`, as the SQL
 * store announces it to every server.
 */
export const layer = Layer.effectContext(
  Effect.gen(function* () {
    const accountsRepo = yield* AccountsRepo
    const keys = MemoryTable.make({
      primaryKey: (key: ApiKey) => key.id,
      unique: { hash: (key) => key.hash },
      indexes: {
        account: (key) => key.accountId,
        newest: {
          key: (key) => key.accountId,
          order: MemoryTable.newestFirst(
            (key: ApiKey) => key.createdAt,
            (key) => key.id
          )
        }
      }
    })

    const changed = yield* PubSub.sliding<void>(1)
    const change = (keyId: string, f: (key: ApiKey) => ApiKey) =>
      Effect.andThen(
        atomically((tx) => {
          const before = keys.get(keyId)
          if (before !== undefined) keys.update(tx, f(before))
        }),
        PubSub.publish(changed, undefined)
      )

    const changes = ApiKeyChanges.of({
      changes: Effect.map(PubSub.subscribe(changed), (subscription) => Effect.asVoid(PubSub.take(subscription)))
    })

    const repo = ApiKeysRepo.of({
      insert: (key) =>
        Effect.flatMap(
          atomically((tx) => keys.insert(tx, key)),
          (violation) =>
            violation === undefined ? Effect.void : Effect.die(new Error("An API key with this hash exists"))
        ),
      findGrantByHash: (hash) =>
        Effect.flatMap(
          Effect.sync(() => keys.find("hash", hash)),
          (key): Effect.Effect<ApiKeyGrant | undefined> =>
            key === undefined
              ? Effect.undefined
              : Effect.zipWith(
                  accountsRepo.findUser(key.accountId, key.userId),
                  accountsRepo.findAccount(key.accountId),
                  (user, account) =>
                    user === undefined || account === undefined
                      ? undefined
                      : { key, role: user.role, ownerUserId: account.ownerUserId }
                )
        ),
      find: (keyId) => Effect.sync(() => keys.get(keyId)),
      listByAccount: (accountId) => Effect.sync(() => [...keys.scan("account", accountId)]),
      pageByAccount: (accountId, page) => Effect.sync(() => keys.page("newest", accountId, page)),
      setScopes: (keyId, scopes) => change(keyId, (key) => ({ ...key, scopes })),
      revoke: (keyId, at) => change(keyId, (key) => ({ ...key, revokedAt: at }))
    })
    return Context.make(ApiKeysRepo, repo).pipe(Context.add(ApiKeyChanges, changes))
  })
)

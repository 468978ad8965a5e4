import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { Account, PlanId, Role } from "@leadline/core/accounts/Account"
import { AccountsRepo } from "@leadline/core/accounts/AccountsRepo"
import type { ApiKey } from "@leadline/core/auth/ApiKey"
import { ApiKeysRepo } from "@leadline/core/auth/ApiKeysRepo"
import type { Scope } from "@leadline/core/auth/Scopes"
import { iso, isoOrNull, isUuid, json, orDie } from "./internal/store.ts"

interface KeyRow {
  readonly id: string
  readonly account_id: string
  readonly user_id: string
  readonly name: string
  readonly scopes: unknown
  readonly hash: string
  readonly prefix: string
  readonly created_at: unknown
  readonly revoked_at: unknown
}

const toKey = (row: KeyRow): ApiKey => ({
  id: row.id,
  accountId: row.account_id,
  userId: row.user_id,
  name: row.name,
  scopes: json<ReadonlyArray<Scope>>(row.scopes),
  hash: row.hash,
  prefix: row.prefix,
  createdAt: iso(row.created_at),
  revokedAt: isoOrNull(row.revoked_at)
})

/** Accounts, users and API keys in SQL: both ports, over the same tables. */
export const layer = Layer.effectContext(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const accounts = AccountsRepo.of({
      insertAccount: (account, owner) =>
        orDie(
          Effect.andThen(
            sql`INSERT INTO accounts (id, name, owner_user_id, plan_id, subscription_status, created_at)
                VALUES (${account.id}, ${account.name}, ${account.ownerUserId}, ${account.planId},
                        ${account.subscriptionStatus}, ${account.createdAt}::timestamptz)`,
            sql`INSERT INTO users (id, account_id, role, created_at)
                VALUES (${owner.id}, ${owner.accountId}, ${owner.role}, ${owner.createdAt}::timestamptz)`
          )
        ).pipe(Effect.asVoid),
      findAccount: (accountId) =>
        isUuid(accountId)
          ? orDie(
              sql<{ id: string; name: string; owner_user_id: string; plan_id: PlanId; created_at: unknown }>`
            SELECT id, name, owner_user_id, plan_id, created_at FROM accounts WHERE id = ${accountId}::uuid`
            ).pipe(
              Effect.map(([row]): Account | undefined =>
                row === undefined
                  ? undefined
                  : {
                      id: row.id,
                      name: row.name,
                      ownerUserId: row.owner_user_id,
                      planId: row.plan_id,
                      subscriptionStatus: "active",
                      createdAt: iso(row.created_at)
                    }
              )
            )
          : Effect.succeed(undefined),
      insertUser: (user) =>
        orDie(
          sql`INSERT INTO users (id, account_id, role, created_at)
              VALUES (${user.id}, ${user.accountId}, ${user.role}, ${user.createdAt}::timestamptz)`
        ).pipe(Effect.asVoid),
      findUser: (accountId, userId) =>
        // Ids that are not UUIDs cannot name a user; asking would only make PostgreSQL complain.
        isUuid(userId)
          ? orDie(
              sql<{ id: string; account_id: string; role: Role; created_at: unknown }>`
                SELECT id, account_id, role, created_at FROM users
                WHERE id = ${userId}::uuid AND account_id = ${accountId}::uuid`
            ).pipe(
              Effect.map(([row]) =>
                row === undefined
                  ? undefined
                  : { id: row.id, accountId: row.account_id, role: row.role, createdAt: iso(row.created_at) }
              )
            )
          : Effect.succeed(undefined),
      // Messages arrive with the conversations issue; until then none were sent.
      countMessagesSentSince: () => Effect.succeed(0)
    })

    const keys = ApiKeysRepo.of({
      insert: (key) =>
        orDie(
          sql`INSERT INTO api_keys (id, account_id, user_id, name, scopes, hash, prefix, created_at)
              VALUES (${key.id}, ${key.accountId}, ${key.userId}, ${key.name}, ${JSON.stringify(key.scopes)}::jsonb,
                      ${key.hash}, ${key.prefix}, ${key.createdAt}::timestamptz)`
        ).pipe(Effect.asVoid),
      findGrantByHash: (hash) =>
        orDie(
          sql<KeyRow & { role: Role; owner_user_id: string }>`
            SELECT k.*, u.role, a.owner_user_id
            FROM api_keys k JOIN users u ON u.id = k.user_id JOIN accounts a ON a.id = k.account_id
            WHERE k.hash = ${hash}`
        ).pipe(
          Effect.map(([row]) =>
            row === undefined ? undefined : { key: toKey(row), role: row.role, ownerUserId: row.owner_user_id }
          )
        ),
      find: (keyId) =>
        orDie(sql<KeyRow>`SELECT * FROM api_keys WHERE id = ${keyId}`).pipe(
          Effect.map(([row]) => (row === undefined ? undefined : toKey(row)))
        ),
      listByAccount: (accountId) =>
        orDie(sql<KeyRow>`SELECT * FROM api_keys WHERE account_id = ${accountId}::uuid ORDER BY created_at, id`).pipe(
          Effect.map((rows) => rows.map(toKey))
        ),
      setScopes: (keyId, scopes) =>
        orDie(sql`UPDATE api_keys SET scopes = ${JSON.stringify(scopes)}::jsonb WHERE id = ${keyId}`).pipe(
          Effect.asVoid
        ),
      revoke: (keyId, at) =>
        orDie(sql`UPDATE api_keys SET revoked_at = ${at}::timestamptz WHERE id = ${keyId} AND revoked_at IS NULL`).pipe(
          Effect.asVoid
        )
    })

    return Context.make(AccountsRepo, accounts).pipe(Context.add(ApiKeysRepo, keys))
  })
)

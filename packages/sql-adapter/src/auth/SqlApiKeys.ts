import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { Role } from "@leadline/core/accounts/Account"
import type { ApiKey } from "@leadline/core/auth/ApiKey"
import { ApiKeyChanges } from "@leadline/core/auth/ApiKeyChanges"
import { ApiKeysRepo } from "@leadline/core/auth/ApiKeysRepo"
import type { Scope } from "@leadline/core/auth/Scopes"
import { iso, isoOrNull, json, orDie } from "../internal/store.ts"
import { API_KEYS_CHANNEL, Notifications } from "../Notifications.ts"

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

// Hand-written: every authenticated request maps a key, and a Schema decode of one row costs ~11 µs against ~1 µs.
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

/** API keys in SQL, stored as hashes; a key's grant joins its user and account. */
export const layer = Layer.effect(
  ApiKeysRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    return ApiKeysRepo.of({
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
      pageByAccount: (accountId, page) =>
        orDie(
          Effect.all([
            sql<KeyRow>`SELECT * FROM api_keys WHERE account_id = ${accountId}::uuid
                        ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
            sql<{ total: number }>`SELECT count(*)::int AS total FROM api_keys WHERE account_id = ${accountId}::uuid`
          ])
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(toKey), total: count?.total ?? 0 }))),
      // Each change is announced at its commit, in the same statement, so no server keeps trusting the old key.
      setScopes: (keyId, scopes) =>
        orDie(
          sql`WITH changed AS (UPDATE api_keys SET scopes = ${JSON.stringify(scopes)}::jsonb WHERE id = ${keyId} RETURNING 1)
              SELECT count(pg_notify(${API_KEYS_CHANNEL}, '')) FROM changed`
        ).pipe(Effect.asVoid),
      revoke: (keyId, at) =>
        orDie(
          sql`WITH changed AS (
                UPDATE api_keys SET revoked_at = ${at}::timestamptz WHERE id = ${keyId} AND revoked_at IS NULL RETURNING 1)
              SELECT count(pg_notify(${API_KEYS_CHANNEL}, '')) FROM changed`
        ).pipe(Effect.asVoid)
    })
  })
)

/** Changes to API keys made by any server on this database, heard through LISTEN. */
export const changesLayer = Layer.effect(
  ApiKeyChanges,
  Effect.map(Notifications, (notifications) => ApiKeyChanges.of({ changes: notifications.listen(API_KEYS_CHANNEL) }))
)

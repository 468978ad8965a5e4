import { Context, Data, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyring from "./Keyring.ts"

/**
 * The keyring the stores seal provider secrets with; none (the default) keeps them unsealed.
 * A reference, so a store layer built without one (a test's) still builds.
 */
export const SecretKeyring = Context.Reference<Keyring.Keyring | undefined>("sql-adapter/SecretKeyring", {
  defaultValue: () => undefined
})

/**
 * A secret column the server keeps sealed, beside the column naming the key that sealed each row
 * (NULL: unsealed). The table, the column and the row's account and id are the authenticated
 * context, so a sealed value copied to another row or column does not open.
 */
interface SealedColumn {
  readonly table: string
  readonly column: string
  readonly keyColumn: string
}

/** Every sealed column: a channel's access token (docs/decisions.md, "Sealed provider secrets (issue 32)"). */
export const COLUMNS: ReadonlyArray<SealedColumn> = [
  { table: "channels", column: "access_token", keyColumn: "access_token_key" }
]

/** The authenticated context of a row's value; rows are keyed by account and id. */
export const contextOf = (column: SealedColumn, accountId: string, id: string) =>
  `${column.table}.${column.column}/${accountId}/${id}`

/** A value as stored: sealed under the current key when there is a keyring, else as given. */
export const store = (
  keyring: Keyring.Keyring | undefined,
  column: SealedColumn,
  accountId: string,
  id: string,
  clear: string
): { readonly value: string; readonly keyId: string | null } =>
  keyring === undefined
    ? { value: clear, keyId: null }
    : { value: keyring.seal(contextOf(column, accountId, id), clear), keyId: keyring.current }

/** A stored value opened; throws `SealedValueError` (never with the value) when it cannot be. */
export const open = (
  keyring: Keyring.Keyring | undefined,
  column: SealedColumn,
  row: { readonly accountId: string; readonly id: string; readonly value: string; readonly keyId: string | null }
): string => {
  if (row.keyId === null) return row.value
  const context = contextOf(column, row.accountId, row.id)
  if (keyring === undefined) {
    throw new Keyring.SealedValueError(`The value in ${context} is sealed, and ${Keyring.SETTING} is not set`)
  }
  return keyring.open(context, row.value)
}

/** Sealed rows the keyring cannot open (no key of their id, or another key under it): no start. */
export class MissingKeys extends Data.TaggedError("MissingKeys")<{ readonly message: string }> {}

const missingMessage = (
  keyring: Keyring.Keyring | undefined,
  missing: ReadonlyArray<{ key_id: string; rows: number }>
) => {
  const list = missing.map((entry) => `${entry.key_id} (${entry.rows} row${entry.rows === 1 ? "" : "s"})`).join(", ")
  return keyring === undefined
    ? `The database holds secrets sealed under the key(s) ${list}, and ${Keyring.SETTING} is not set: ` +
        "set it to the keyring that sealed them"
    : `The database holds secrets sealed under the key(s) ${list}, which ${Keyring.SETTING} does not hold ` +
        `(it holds ${keyring.ids.join(", ")}): add them to the keyring`
}

/**
 * Refuses to go on when a sealed row's key is not in the keyring (or there is no keyring): such a
 * row could never be opened, and a channel would fail at its first send instead of at start.
 */
export const check = (keyring: Keyring.Keyring | undefined) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const missing: Array<{ key_id: string; rows: number }> = []
    for (const column of COLUMNS) {
      const used = yield* sql<{ key_id: string; rows: number }>`
        SELECT ${sql(column.keyColumn)} AS key_id, count(*)::int AS rows FROM ${sql(column.table)}
        WHERE ${sql(column.keyColumn)} IS NOT NULL GROUP BY 1 ORDER BY 1`.pipe(Effect.orDie)
      missing.push(...used.filter((entry) => keyring === undefined || !keyring.ids.includes(entry.key_id)))
    }
    if (missing.length > 0) return yield* new MissingKeys({ message: missingMessage(keyring, missing) })
    if (keyring !== undefined) yield* sameKeys(keyring)
  })

/**
 * A key given again under its id but with other bytes (a `new-key` run twice) passes the check of
 * ids; so a few rows of each key are opened too. One that opens is enough: a single changed row
 * must not keep the server from starting, only a key that opens none of its rows.
 */
const sameKeys = (keyring: Keyring.Keyring) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const column of COLUMNS) {
      const samples = yield* sql<StoredRow>`
        SELECT account_id::text AS account_id, id, value, key_id FROM (
          SELECT account_id, id, ${sql(column.column)} AS value, ${sql(column.keyColumn)} AS key_id,
                 row_number() OVER (PARTITION BY ${sql(column.keyColumn)} ORDER BY account_id, id) AS n
          FROM ${sql(column.table)} WHERE ${sql(column.keyColumn)} IS NOT NULL
        ) AS sampled WHERE n <= 3`.pipe(Effect.orDie)
      for (const keyId of new Set(samples.map((row) => row.key_id))) {
        const rows = samples.filter((row) => row.key_id === keyId)
        const opens = rows.some((row) => {
          try {
            open(keyring, column, { accountId: row.account_id, id: row.id, value: row.value, keyId: row.key_id })
            return true
          } catch {
            return false
          }
        })
        if (!opens) {
          return yield* new MissingKeys({
            message:
              `The key ${keyId} in ${Keyring.SETTING} opens none of the values sealed under ${keyId} ` +
              `(tried ${rows.map((row) => contextOf(column, row.account_id, row.id)).join(", ")}): ` +
              "it is not the key that sealed them; give that key under its id"
          })
        }
      }
    }
  })

/**
 * The keyring for the stores, after the start-up check; without one, one line says how to make one
 * (the server still starts: `npm start` needs no setup).
 */
export const layer = (keyring: Keyring.Keyring | undefined) =>
  Layer.effect(
    SecretKeyring,
    Effect.gen(function* () {
      yield* check(keyring)
      yield* keyring === undefined
        ? Effect.logInfo(
            `Secrets: channel access tokens are stored unsealed; set ${Keyring.SETTING} to seal them ` +
              "(make a key with `leadline secrets new-key`)"
          )
        : Effect.logInfo(`Secrets: sealed with the key ${keyring.current} (keyring: ${keyring.ids.join(", ")})`)
      return keyring
    })
  )

/** What a reseal did, per column. */
export interface Resealed {
  readonly table: string
  readonly column: string
  /** Unsealed values now sealed. */
  readonly sealed: number
  /** Values moved from an older key to the current one. */
  readonly rekeyed: number
  /** Values changed by a server while the reseal read them: they are as that server wrote them. */
  readonly changedMeanwhile: number
  /** Values that did not open (their contexts): left as they are. */
  readonly failed: ReadonlyArray<string>
}

interface StoredRow {
  readonly account_id: string
  readonly id: string
  readonly value: string
  readonly key_id: string | null
}

/**
 * Seals every value not yet under the keyring's current key (unsealed ones included), a batch at a
 * time in key order. Each row is written only if it still holds what was read, so a server changing
 * a token meanwhile wins, and servers can run throughout (they must hold every key in use).
 */
export const reseal = (keyring: Keyring.Keyring, options: { readonly batchSize?: number } = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const batchSize = options.batchSize ?? 100
    const report: Array<Resealed> = []
    for (const column of COLUMNS) {
      let sealed = 0
      let rekeyed = 0
      let changedMeanwhile = 0
      const failed: Array<string> = []
      // Keyset order: a row that does not open is passed over, not read again.
      let after: readonly [string, string] = ["00000000-0000-0000-0000-000000000000", ""]
      for (;;) {
        const rows: ReadonlyArray<StoredRow> = yield* sql<StoredRow>`
          SELECT account_id::text AS account_id, id, ${sql(column.column)} AS value, ${sql(column.keyColumn)} AS key_id
          FROM ${sql(column.table)}
          WHERE ${sql(column.keyColumn)} IS DISTINCT FROM ${keyring.current}
            AND (account_id, id) > (${after[0]}::uuid, ${after[1]})
          ORDER BY account_id, id LIMIT ${batchSize}`
        if (rows.length === 0) break
        for (const row of rows) {
          let clear: string
          try {
            clear = open(keyring, column, {
              accountId: row.account_id,
              id: row.id,
              value: row.value,
              keyId: row.key_id
            })
          } catch {
            failed.push(contextOf(column, row.account_id, row.id))
            continue
          }
          const next = store(keyring, column, row.account_id, row.id, clear)
          const written = yield* sql`
            UPDATE ${sql(column.table)} SET ${sql(column.column)} = ${next.value}, ${sql(column.keyColumn)} = ${next.keyId}
            WHERE account_id = ${row.account_id}::uuid AND id = ${row.id} AND ${sql(column.column)} = ${row.value}
            RETURNING id`
          if (written.length === 0) changedMeanwhile++
          else if (row.key_id === null) sealed++
          else rekeyed++
        }
        const last = rows[rows.length - 1]!
        after = [last.account_id, last.id]
      }
      report.push({ table: column.table, column: column.column, sealed, rekeyed, changedMeanwhile, failed })
    }
    return report
  })

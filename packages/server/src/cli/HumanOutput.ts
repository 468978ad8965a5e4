import type { CreatedAccount, CreatedKey, CreatedUser } from "@leadline/core/admin/Operator"
import type { KeySummary, RevokedKey } from "@leadline/core/auth/ApiKey"
import { FULL_ACCESS } from "@leadline/core/auth/Scopes"
import type { Resealed } from "@leadline/sql-adapter/sealing/SealedSecrets"

/** What each command prints without `--json`: short lines a person reads once. */

const scopes = (list: ReadonlyArray<string>): string => (list.length === 0 ? FULL_ACCESS : list.join(", "))

export const createdAccount = (answer: typeof CreatedAccount.Type): string =>
  [
    `Created account ${answer.account_id}`,
    `  owner user:   ${answer.owner_user_id}`,
    `  owner key:    ${answer.api_key}`,
    "The owner key has full access and is shown only this once: keep it now."
  ].join("\n")

export const createdUser = (accountId: string, answer: typeof CreatedUser.Type): string =>
  `Created user ${answer.user_id} (${answer.role}) in account ${accountId}`

export const createdKey = (accountId: string, answer: typeof CreatedKey.Type): string =>
  [
    `Created key ${answer.id} in account ${accountId}`,
    `  scopes:  ${scopes(answer.scopes)}`,
    `  api key: ${answer.api_key}`,
    "The key is shown only this once: keep it now."
  ].join("\n")

export const keyList = (accountId: string, keys: ReadonlyArray<typeof KeySummary.Type>): string => {
  if (keys.length === 0) return `Account ${accountId} has no API keys`
  const rows = keys.map((key) => [
    key.id,
    key.name === "" ? "-" : key.name,
    `${key.prefix}…`,
    key.user_id,
    key.created_at,
    key.revoked_at === null ? "active" : `revoked ${key.revoked_at}`,
    scopes(key.scopes)
  ])
  return table(["ID", "NAME", "PREFIX", "USER", "CREATED", "STATUS", "SCOPES"], rows)
}

export const scopesSet = (key: typeof KeySummary.Type): string => `Key ${key.id} now has: ${scopes(key.scopes)}`

export const revoked = (answer: typeof RevokedKey.Type): string =>
  answer.revoked ? `Revoked key ${answer.id}: it gets 401 from now on` : `Key ${answer.id} was not revoked`

export const migrations = (applied: ReadonlyArray<readonly [id: number, name: string]>): string =>
  applied.length === 0
    ? "No migrations to apply: the database is up to date"
    : [`Applied ${applied.length} migration(s):`, ...applied.map(([id, name]) => `  ${id} ${name}`)].join("\n")

/** Left-aligned columns; the last one is not padded so lines carry no trailing spaces. */
const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const all = [header, ...rows]
  const widths = header.map((_, column) => Math.max(...all.map((row) => row[column]!.length)))
  return all
    .map((row) =>
      row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ")
    )
    .join("\n")
}

export const resealed = (report: ReadonlyArray<Resealed>): string =>
  report
    .map(
      (column) =>
        `${column.table}.${column.column}: ${column.sealed} sealed, ${column.rekeyed} moved to the current key, ` +
        `${column.changedMeanwhile} changed meanwhile (left as written), ${column.failed.length} did not open`
    )
    .join("\n")

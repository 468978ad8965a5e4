import type { Effect } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"

/**
 * One schema change, in a file of its own named after its key (`0002_webhooks.ts`).
 * The key is what the migrations table records (`2`, `webhooks`): never edit a
 * released migration or its key, add the next number.
 */
export interface Migration {
  /** `NNNN_name`, as the file is named. */
  readonly key: string
  readonly run: Effect.Effect<void, unknown, SqlClient.SqlClient>
}

export const make = (key: string, run: Migration["run"]): Migration => ({ key, run })

const KEY = /^(\d+)_(.+)$/

/**
 * The number and name the migrations table records, read from the key as
 * `Migrator.fromRecord` read the old record's keys; `undefined` without a number.
 */
export const parse = (key: string): { readonly id: number; readonly name: string } | undefined => {
  const match = KEY.exec(key)
  return match === null ? undefined : { id: Number(match[1]), name: match[2]! }
}

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

/**
 * Whether the schema can be distributed by account with Citus (docs/scaling.md, "Citus"): every
 * table is either distributed by `account_id`, colocated with every other such table, or named
 * here as one Citus keeps whole. Read from the catalog of the current schema after the
 * migrations, so a new table must be keyed by account or listed with a reason.
 */

/** A table Citus keeps whole: copied to every node (reference), or on the coordinator alone (local). */
export interface Undistributed {
  readonly kind: "reference" | "local"
  readonly why: string
}

export type Classification = Readonly<Record<string, Undistributed>>

/** The tables that are not distributed by account, and why (docs/scaling.md says the same). */
export const UNDISTRIBUTED: Classification = {
  accounts: {
    kind: "reference",
    why: "the tenants themselves: one row each, read by id on every node, written when an account is made or its plan changes"
  },
  users: {
    kind: "reference",
    why: "a few per account, written rarely; a key's grant joins its user before the account is known"
  },
  api_keys: {
    kind: "reference",
    why: "looked up by the hash of the key before the account is known (a distributed table would ask every shard); written only when a key is issued, changed or revoked, and cached for 10 s by each server"
  },
  channels: {
    kind: "reference",
    why: "WhatsApp's webhooks are routed by phone_number_id (unique across accounts) before the account is known; a few per account, written when connected or when Meta reports their health"
  },
  leadline_migrations: {
    kind: "local",
    why: "the migrator's bookkeeping, read and written by `leadline migrate` on the coordinator only"
  }
}

/** The distributed table the others are colocated with: the first one distributed. */
export const COLOCATION_ROOT = "leads"

interface TableRow {
  readonly name: string
  readonly account_attnum: number | null
  readonly account_type: string | null
  readonly account_not_null: boolean | null
}

interface IndexRow {
  readonly table: string
  readonly name: string
  readonly primary: boolean
  readonly columns: string
  readonly definition: string
}

interface ForeignKeyRow {
  readonly table: string
  readonly name: string
  readonly referenced: string
  readonly columns: string
  readonly referenced_columns: string
  readonly definition: string
}

export interface Catalog {
  readonly tables: ReadonlyArray<TableRow>
  readonly uniqueIndexes: ReadonlyArray<IndexRow>
  readonly foreignKeys: ReadonlyArray<ForeignKeyRow>
}

/** The tables, unique indexes (primary keys and partial ones included) and foreign keys of the current schema. */
export const readCatalog = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [{ schema }] = (yield* sql<{ schema: string }>`SELECT current_schema() AS schema`) as [{ schema: string }]
  const tables = yield* sql<TableRow>`
    SELECT c.relname AS name, a.attnum AS account_attnum,
           format_type(a.atttypid, a.atttypmod) AS account_type, a.attnotnull AS account_not_null
    FROM pg_class c
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'account_id' AND NOT a.attisdropped
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    ORDER BY c.relname`.withoutTransform
  const uniqueIndexes = yield* sql<IndexRow>`
    SELECT t.relname AS table, i.relname AS name, x.indisprimary AS primary, x.indkey::text AS columns,
           pg_get_indexdef(x.indexrelid) AS definition
    FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
    WHERE t.relnamespace = current_schema()::regnamespace AND x.indisunique
    ORDER BY t.relname, i.relname`.withoutTransform
  const foreignKeys = yield* sql<ForeignKeyRow>`
    SELECT src.relname AS table, con.conname AS name, dst.relname AS referenced,
           array_to_string(con.conkey, ' ') AS columns, array_to_string(con.confkey, ' ') AS referenced_columns,
           pg_get_constraintdef(con.oid) AS definition
    FROM pg_constraint con JOIN pg_class src ON src.oid = con.conrelid JOIN pg_class dst ON dst.oid = con.confrelid
    WHERE con.contype = 'f' AND src.relnamespace = current_schema()::regnamespace
    ORDER BY src.relname, con.conname`.withoutTransform
  // Definitions name the schema (`ON t_x.leads`); without it they read the same on every database.
  const unqualified = (text: string) => text.replaceAll(`${schema}.`, "")
  return {
    tables,
    uniqueIndexes: uniqueIndexes.map((row) => ({ ...row, definition: unqualified(row.definition) })),
    foreignKeys: foreignKeys.map((row) => ({ ...row, definition: unqualified(row.definition) }))
  } satisfies Catalog
})

export interface Readiness {
  /** Distributed by `account_id`, colocated with `COLOCATION_ROOT`. */
  readonly distributed: ReadonlyArray<string>
  readonly reference: ReadonlyArray<string>
  readonly local: ReadonlyArray<string>
  /** What keeps the schema from being distributed, each naming its table and index or constraint. */
  readonly problems: ReadonlyArray<string>
}

const numbers = (list: string) =>
  list
    .split(" ")
    .filter((n) => n !== "")
    .map(Number)

/**
 * Citus distributes a table by one column, so on a distributed table every primary key and
 * unique index must hold it (uniqueness is checked shard by shard), a foreign key to another
 * distributed table must pair it with the other's (both rows on one shard), and a table kept
 * whole may not point at a distributed one. `account_id` is that column: a table that has it
 * is distributed unless listed, one without it must be listed, and it is a uuid everywhere
 * (colocated tables share the distribution column's type).
 */
export const check = (catalog: Catalog, classification: Classification = UNDISTRIBUTED): Readiness => {
  const problems: Array<string> = []
  const present = new Set(catalog.tables.map((table) => table.name))
  const account = new Map<string, number>()
  for (const table of catalog.tables) {
    if (classification[table.name] !== undefined) continue
    if (table.account_attnum === null) {
      problems.push(`${table.name}: no account_id column, and not listed as a reference or local table`)
      continue
    }
    account.set(table.name, table.account_attnum)
    if (table.account_type !== "uuid") problems.push(`${table.name}: account_id is ${table.account_type}, not uuid`)
    if (table.account_not_null !== true) problems.push(`${table.name}: account_id may be null`)
  }
  for (const name of Object.keys(classification)) {
    if (!present.has(name)) problems.push(`${name}: listed as a ${classification[name]!.kind} table, but there is none`)
  }
  const distributed = [...account.keys()]
  for (const name of distributed) {
    if (!catalog.uniqueIndexes.some((index) => index.table === name && index.primary)) {
      problems.push(`${name}: no primary key`)
    }
  }
  for (const index of catalog.uniqueIndexes) {
    const attnum = account.get(index.table)
    if (attnum === undefined || numbers(index.columns).includes(attnum)) continue
    problems.push(
      `${index.table}: ${index.primary ? "primary key" : "unique index"} ${index.name} lacks account_id (${index.definition})`
    )
  }
  for (const key of catalog.foreignKeys) {
    const from = account.get(key.table)
    const to = account.get(key.referenced)
    if (from === undefined && to !== undefined) {
      problems.push(
        `${key.table}: foreign key ${key.name} points from a ${classification[key.table]?.kind ?? "kept"} table at the distributed ${key.referenced} (${key.definition})`
      )
    } else if (from !== undefined && to === undefined && classification[key.referenced]?.kind === "local") {
      problems.push(
        `${key.table}: foreign key ${key.name} points at ${key.referenced}, kept on the coordinator alone (${key.definition})`
      )
    } else if (from !== undefined && to !== undefined) {
      const columns = numbers(key.columns)
      const referenced = numbers(key.referenced_columns)
      const paired = columns.some((attnum, i) => attnum === from && referenced[i] === to)
      if (!paired) {
        problems.push(
          `${key.table}: foreign key ${key.name} to ${key.referenced} does not pair account_id with account_id (${key.definition})`
        )
      }
    }
  }
  const kept = (kind: Undistributed["kind"]) =>
    catalog.tables.filter((table) => classification[table.name]?.kind === kind).map((table) => table.name)
  return { distributed, reference: kept("reference"), local: kept("local"), problems }
}

/**
 * The statements that distribute the schema, in an order Citus accepts: the reference tables,
 * each after those it points at; then `COLOCATION_ROOT`; then every other distributed table
 * after those it points at, colocated with the root (names in alphabetical order where the
 * foreign keys leave a choice). Local tables need none.
 */
export const statements = (catalog: Catalog, readiness: Readiness): ReadonlyArray<string> => {
  const ordered = (names: ReadonlyArray<string>, first: ReadonlyArray<string>) => {
    const placed: Array<string> = [...first]
    let rest = [...names].filter((name) => !first.includes(name)).sort()
    while (rest.length > 0) {
      const ready = rest.find((name) =>
        catalog.foreignKeys.every(
          (key) => key.table !== name || key.referenced === name || !rest.includes(key.referenced)
        )
      )
      // A loop of foreign keys among them: Citus takes them in any order once the keys are added after.
      const next = ready ?? rest[0]!
      placed.push(next)
      rest = rest.filter((name) => name !== next)
    }
    return placed
  }
  const root = readiness.distributed.includes(COLOCATION_ROOT) ? [COLOCATION_ROOT] : []
  return [
    ...ordered(readiness.reference, []).map((name) => `SELECT create_reference_table('${name}');`),
    ...ordered(readiness.distributed, root).map((name) =>
      name === COLOCATION_ROOT
        ? `SELECT create_distributed_table('${name}', 'account_id');`
        : `SELECT create_distributed_table('${name}', 'account_id', colocate_with => '${COLOCATION_ROOT}');`
    )
  ]
}

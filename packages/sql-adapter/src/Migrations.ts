import { Effect } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "./Migration.ts"
import * as AccountsLeadsIdempotencyEvents0001 from "./migrations/0001_accounts_leads_idempotency_events.ts"
import type * as Slice from "./Slice.ts"
import * as Slices from "./Slices.ts"

/** Where applied migrations are recorded (by number and name). */
export const TABLE = "leadline_migrations"

/**
 * Migrations released before each slice kept its own, which make the tables of
 * several slices at once. Their keys are recorded in existing databases, so they
 * stay whole, in `src/migrations/`. Nothing new goes here: a new migration is a
 * file in its slice's `migrations/` folder and a line in that slice.
 */
export const historical: ReadonlyArray<Migration.Migration> = [AccountsLeadsIdempotencyEvents0001.migration]

/** A migration with the number and name the migrations table records, and who declared it. */
export interface Planned {
  readonly id: number
  readonly name: string
  /** The slice's name, or "historical". */
  readonly owner: string
  readonly migration: Migration.Migration
}

/**
 * Every migration, in the order they apply: by number, one sequence across all
 * slices. Fails when a key has no number or when two migrations share one (two
 * slices took the same next number): the runner would apply neither reliably.
 */
export const plan = (
  slices: ReadonlyArray<Slice.Slice> = Slices.all,
  shared: ReadonlyArray<Migration.Migration> = historical
): Effect.Effect<ReadonlyArray<Planned>, Migrator.MigrationError> =>
  Effect.suspend(() => {
    const declared = [
      ...shared.map((migration) => ({ owner: "historical", migration })),
      ...slices.flatMap((slice) => slice.migrations.map((migration) => ({ owner: slice.name, migration })))
    ]
    const byId = new Map<number, Planned>()
    for (const { owner, migration } of declared) {
      const parsed = Migration.parse(migration.key)
      if (parsed === undefined || !Number.isSafeInteger(parsed.id) || parsed.id < 1) {
        return Effect.fail(
          new Migrator.MigrationError({
            kind: "BadState",
            message: `Migration "${migration.key}" of ${owner} is not named NNNN_name with a number from 1`
          })
        )
      }
      const taken = byId.get(parsed.id)
      if (taken !== undefined) {
        return Effect.fail(
          new Migrator.MigrationError({
            kind: "Duplicates",
            message:
              `Migration number ${parsed.id} is declared twice: "${taken.migration.key}" (${taken.owner}) and ` +
              `"${migration.key}" (${owner}); give the newer one the next free number`
          })
        )
      }
      byId.set(parsed.id, { ...parsed, owner, migration })
    }
    return Effect.succeed([...byId.values()].sort((a, b) => a.id - b.id))
  })

/**
 * The migrator applies only numbers above the highest one recorded, so a
 * migration numbered below it would be skipped without a word (a branch merged
 * after a later number shipped): refuse to start instead.
 */
const refuseSkipped = (planned: ReadonlyArray<Planned>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const recorded = yield* sql<{ migration_id: number }>`SELECT migration_id FROM ${sql(TABLE)}`.withoutTransform
    const applied = new Set(recorded.map((row) => Number(row.migration_id)))
    const latest = Math.max(0, ...applied)
    const skipped = planned.filter((migration) => migration.id < latest && !applied.has(migration.id))
    if (skipped.length > 0) {
      return yield* new Migrator.MigrationError({
        kind: "BadState",
        message:
          `Migration(s) ${skipped.map((m) => `"${m.migration.key}" (${m.owner})`).join(", ")} would never run: ` +
          `the database has already applied number ${latest}; renumber them after every released migration`
      })
    }
  }).pipe(
    Effect.catchTag("SqlError", (cause) =>
      Effect.fail(
        new Migrator.MigrationError({ kind: "Failed", cause, message: `Could not read ${TABLE}: ${cause.message}` })
      )
    )
  )

const loader = (slices: ReadonlyArray<Slice.Slice>, shared: ReadonlyArray<Migration.Migration>) =>
  Effect.gen(function* () {
    const planned = yield* plan(slices, shared)
    yield* refuseSkipped(planned)
    return planned.map(
      ({ id, name, migration }): Migrator.ResolvedMigration => [id, name, Effect.succeed(migration.run)]
    )
  })

/** Applies the given slices' migrations not yet applied, in order; returns what it applied (tests pass their own slices). */
export const runFor = (slices: ReadonlyArray<Slice.Slice>, shared: ReadonlyArray<Migration.Migration> = historical) =>
  Migrator.make({})({ loader: loader(slices, shared), table: TABLE })

/**
 * The schema, as numbered migrations applied in order at start (and by
 * `leadline migrate`). Never edit a released migration: add the next number.
 */
export const run = runFor(Slices.all)

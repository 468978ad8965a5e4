import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import * as Database from "@leadline/sql-adapter/Database"
import * as Migration from "@leadline/sql-adapter/Migration"
import * as Migrations from "@leadline/sql-adapter/Migrations"
import * as Slice from "@leadline/sql-adapter/Slice"
import * as Slices from "@leadline/sql-adapter/Slices"
import * as TestDatabase from "../src/TestDatabase.ts"

/**
 * What the runner applied to a fresh database before the migrations moved into
 * their slices (then one record in Migrations.ts). Existing databases have these
 * numbers and names recorded: they must never change.
 */
const RELEASED: ReadonlyArray<readonly [number, string]> = [
  [1, "accounts_leads_idempotency_events"],
  [2, "webhooks"]
]

const SRC = fileURLToPath(new URL("../../sql-adapter/src", import.meta.url))

const onPglite = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(Effect.provide(effect, Database.client({ dataDir: Database.MEMORY })))

/** A migration that records its key in `applied_log`, to see the order they ran in. */
const logging = (key: string) =>
  Migration.make(
    key,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE IF NOT EXISTS applied_log (n serial PRIMARY KEY, key text NOT NULL)`
      yield* sql`INSERT INTO applied_log (key) VALUES (${key})`
    })
  )

const slice = (name: string, ...keys: ReadonlyArray<string>) =>
  Slice.make({ name, layer: Layer.empty, migrations: keys.map(logging) })

/** The runner's refusal: a `MigrationError`, not a failed statement. */
const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => {
    assert.instanceOf(error, Migrator.MigrationError)
    return error as Migrator.MigrationError
  })

const logged = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return (yield* sql<{ key: string }>`SELECT key FROM applied_log ORDER BY n`).map((row) => row.key)
})

const recorded = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ migration_id: number; name: string }>`
    SELECT migration_id, name FROM leadline_migrations ORDER BY migration_id`
  return rows.map((row) => [row.migration_id, row.name] as const)
})

describe("SQL migrations, collected from the slices", () => {
  it.effect("keep the released numbers and names, and number every migration once, in order", () =>
    Effect.gen(function* () {
      const planned = yield* Migrations.plan()
      const ids = planned.map((migration) => migration.id)
      assert.deepStrictEqual(
        planned.slice(0, RELEASED.length).map((migration) => [migration.id, migration.name]),
        RELEASED.map(([id, name]) => [id, name])
      )
      assert.strictEqual(new Set(ids).size, ids.length)
      assert.deepStrictEqual(
        ids,
        [...ids].sort((a, b) => a - b)
      )
    })
  )

  it("are one file each, named after the key, in the folder of the slice that declares it", () => {
    const declared = [
      ...Migrations.historical.map((migration) => join("migrations", `${migration.key}.ts`)),
      ...Slices.all.flatMap((slice) =>
        slice.migrations.map((migration) => join(slice.name, "migrations", `${migration.key}.ts`))
      )
    ].sort()
    // Every folder's migrations, listed slice or not: a file nobody declares would never run.
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => (entry.name === "migrations" ? "migrations" : join(entry.name, "migrations")))
    const onDisk = folders
      .filter((folder) => existsSync(join(SRC, folder)))
      .flatMap((folder) => readdirSync(join(SRC, folder)).map((file) => join(folder, file)))
      .sort()
    assert.deepStrictEqual(onDisk, declared)
  })

  it.effect("apply in order on a fresh database, are recorded under their released ids, and apply once", () =>
    Effect.gen(function* () {
      const database = yield* Effect.acquireRelease(
        Effect.promise(() => TestDatabase.make()),
        (database) => Effect.promise(() => database.dispose())
      )
      const planned = (yield* Migrations.plan()).map((migration) => [migration.id, migration.name] as const)
      yield* Effect.gen(function* () {
        assert.deepStrictEqual(yield* Migrations.run, planned)
        assert.deepStrictEqual(yield* recorded, planned)
        assert.deepStrictEqual(yield* Migrations.run, [])
      }).pipe(Effect.provide(Database.client(database.config)))
    }).pipe(Effect.scoped)
  )

  it.effect("run by number across slices, whatever the order of the slice list", () =>
    onPglite(
      Effect.gen(function* () {
        const applied = yield* Migrations.runFor([
          slice("later", "0004_second", "0006_fourth"),
          slice("sooner", "0003_first", "0005_third")
        ])
        assert.deepStrictEqual(
          applied.map(([id]) => id),
          [1, 3, 4, 5, 6]
        )
        assert.deepStrictEqual(yield* logged, ["0003_first", "0004_second", "0005_third", "0006_fourth"])
      })
    )
  )

  it.effect("refuse two slices that take the same number, naming both, and apply nothing", () =>
    onPglite(
      Effect.gen(function* () {
        const error = yield* refusal(
          Migrations.runFor([slice("leads", "0003_lead_notes"), slice("webhooks", "0003_endpoint_headers")])
        )
        assert.strictEqual(error.kind, "Duplicates")
        assert.include(error.message, '"0003_lead_notes" (leads)')
        assert.include(error.message, '"0003_endpoint_headers" (webhooks)')
        assert.deepStrictEqual(yield* recorded, [])
      })
    )
  )

  it.effect("refuse a slice that takes a released number, and a key without a number", () =>
    Effect.gen(function* () {
      const taken = yield* refusal(Migrations.plan([slice("leads", "0001_lead_notes")]))
      assert.strictEqual(taken.kind, "Duplicates")
      assert.include(taken.message, '"0001_accounts_leads_idempotency_events" (historical)')
      assert.include(taken.message, '"0001_lead_notes" (leads)')
      const unnumbered = yield* refusal(Migrations.plan([slice("leads", "lead_notes")]))
      assert.strictEqual(unnumbered.kind, "BadState")
      assert.include(unnumbered.message, '"lead_notes" of leads')
    })
  )

  it.effect("refuse to start when a migration is numbered below one already applied (it would never run)", () =>
    onPglite(
      Effect.gen(function* () {
        yield* Migrations.runFor([slice("leads", "0003_first"), slice("webhooks", "0005_third")])
        const error = yield* refusal(
          Migrations.runFor([
            slice("leads", "0003_first"),
            slice("auth", "0004_late"),
            slice("webhooks", "0005_third", "0006_fourth")
          ])
        )
        assert.strictEqual(error.kind, "BadState")
        assert.include(error.message, '"0004_late" (auth)')
        assert.deepStrictEqual(
          (yield* recorded).map(([id]) => id),
          [1, 3, 5]
        )
        assert.deepStrictEqual(yield* logged, ["0003_first", "0005_third"])
      })
    )
  )
})

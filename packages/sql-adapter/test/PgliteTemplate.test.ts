import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, describe, expect, it } from "vitest"
import * as Database from "../src/Database.ts"
import * as Migration from "../src/Migration.ts"
import * as Migrations from "../src/Migrations.ts"
import * as PgliteClient from "../src/PgliteClient.ts"
import * as PgliteTemplate from "../src/PgliteTemplate.ts"
import * as Slice from "../src/Slice.ts"
import * as Slices from "../src/Slices.ts"

/** What a database's schema is made of, as PostgreSQL describes it, and the migrations it records. */
const schema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    relations: yield* sql`
      SELECT c.relname, c.relkind, c.relpersistence FROM pg_class c
      WHERE c.relnamespace = 'public'::regnamespace ORDER BY 1`,
    columns: yield* sql`
      SELECT table_name, column_name, ordinal_position, data_type, column_default, is_nullable, is_identity
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 3`,
    indexes: yield* sql`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`,
    constraints: yield* sql`
      SELECT conrelid::regclass::text AS relation, conname, pg_get_constraintdef(oid) AS definition
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`,
    functions: yield* sql`
      SELECT proname, pg_get_functiondef(oid) AS definition FROM pg_proc
      WHERE pronamespace = 'public'::regnamespace ORDER BY 1, 2`,
    triggers: yield* sql`
      SELECT tgrelid::regclass::text AS relation, tgname, pg_get_triggerdef(oid) AS definition
      FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2`,
    migrations: yield* sql`SELECT migration_id, name FROM ${sql(Migrations.TABLE)} ORDER BY 1`
  }
})

/** When the migrations a database records were applied (the migrated template's: when the build made it). */
const appliedAt = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ created_at: Date }>`SELECT created_at FROM ${sql(Migrations.TABLE)}`.withoutTransform
  return rows.map((row) => new Date(row.created_at).getTime())
})

const onMemory = <A, E>(
  effect: Effect.Effect<A, E, SqlClient.SqlClient>,
  layer: Layer.Layer<SqlClient.SqlClient, unknown>
) => Effect.runPromise(Effect.scoped(Effect.provide(effect, layer)))

/** The embedded database's template (src/PgliteTemplate.ts): made by the build, used for new databases only. */
describe("PgliteTemplate", () => {
  const root = mkdtempSync(join(tmpdir(), "leadline-template-"))
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it("is made by the build, for the installed PGlite", () => {
    const file = PgliteTemplate.file()
    expect(file).toMatch(/pglite-template-\d+\.\d+\.\d+\.tar\.gz$/)
    expect(existsSync(file!)).toBe(true)
  })

  it("is offered for a new database, on disk or in memory", () => {
    expect(PgliteTemplate.forNewDatabase(join(root, "nothing-yet"))).toBeInstanceOf(Blob)
    expect(PgliteTemplate.forNewDatabase(undefined)).toBeInstanceOf(Blob)
  })

  it("starts a new database, is not offered again once it exists, and what was written stays", async () => {
    const directory = join(root, "data", "pglite")
    const open = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
      Effect.runPromise(Effect.scoped(Effect.provide(effect, PgliteClient.layer(directory))))

    await open(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.andThen(sql`CREATE TABLE kept (note text)`, sql`INSERT INTO kept VALUES ('written on day one')`)
      )
    )
    expect(existsSync(join(directory, "PG_VERSION"))).toBe(true)
    expect(PgliteTemplate.forNewDatabase(directory)).toBeUndefined()

    const rows = await open(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ note: string }>`SELECT note FROM kept`))
    expect(rows).toEqual([{ note: "written on day one" }])
  })

  it("names its PGlite version, so another version finds none and runs initdb", () => {
    expect(PgliteTemplate.file("0.0.1")).toMatch(/pglite-template-0\.0\.1\.tar\.gz$/)
    expect(existsSync(PgliteTemplate.file("0.0.1")!)).toBe(false)
  })

  it("a new database from the migrated template is the one every migration makes from initdb's", async () => {
    const started = Date.now()
    const fromScratch = await onMemory(Effect.andThen(Migrations.run, schema), PgliteClient.layer(undefined, "initdb"))
    const [fromTemplate, when] = await onMemory(
      Effect.all([schema, appliedAt]),
      Database.layer({ dataDir: Database.MEMORY })
    )
    expect(fromTemplate.migrations.length).toBe((await Effect.runPromise(Migrations.plan())).length)
    expect(fromTemplate).toEqual(fromScratch)
    // Applied when the build made the template, not by this start.
    expect(Math.max(...when)).toBeLessThan(started)
  })

  it("unpacks a new database on disk from the migrated template, whole and under its name", async () => {
    const dataDir = join(root, "unpacked")
    const [tables, when] = await onMemory(
      Effect.all([
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM leads`),
        appliedAt
      ]),
      Database.layer({ dataDir })
    )
    expect(tables).toEqual([{ n: 0 }])
    expect(when.length).toBeGreaterThan(40)
    expect(existsSync(join(dataDir, "pglite", "PG_VERSION"))).toBe(true)
    // The staging directory was renamed into place.
    expect(readdirSync(dataDir)).toEqual(["pglite"])
    expect(PgliteTemplate.unpack(join(dataDir, "pglite"), "migrated")).toBe(false)
  })

  it("leaves the migrations newer than the template to the migrator, as on any start", async () => {
    const later = Migration.make(
      "9999_after_the_build",
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE after_the_build (id int)`)
    )
    const extra = Slice.make({ name: "later", layer: Layer.empty, migrations: [later] })
    const applied = await onMemory(
      Migrations.runFor([...Slices.all, extra]),
      Database.client({ dataDir: Database.MEMORY }, "migrated")
    )
    expect(applied).toEqual([[9999, "after_the_build"]])
  })

  it("records each migration it holds with its file's hash, for the sources and the built package", () => {
    const manifest = JSON.parse(readFileSync(PgliteTemplate.manifestFile()!, "utf8")) as PgliteTemplate.Manifest
    const sources = PgliteTemplate.migrationHashes("src")
    expect(manifest.migrations.src).toEqual(sources)
    expect(Object.keys(sources)).toContain("0001_accounts_leads_idempotency_events")
    expect(Object.keys(manifest.migrations.dist ?? {})).toEqual(Object.keys(sources))
  })

  it("holds a database only for the migrations it was made with, newer ones left to apply", () => {
    const held = { "0001_first": "a", "0002_second": "b", "0004_fourth": "c" }
    expect(PgliteTemplate.holds(held, held)).toBe(true)
    // A migration added after the build is applied on start.
    expect(PgliteTemplate.holds(held, { ...held, "0005_fifth": "d" })).toBe(true)
    // One it holds was edited since, or is gone: the template would not be what the code makes.
    expect(PgliteTemplate.holds(held, { ...held, "0002_second": "edited" })).toBe(false)
    expect(PgliteTemplate.holds(held, { "0001_first": "a", "0004_fourth": "c" })).toBe(false)
    // One numbered below its last that it lacks would never run (the migrator refuses to start).
    expect(PgliteTemplate.holds(held, { ...held, "0003_third": "e" })).toBe(false)
    expect(PgliteTemplate.holds({}, held)).toBe(false)
  })
})

import { writeFileSync } from "node:fs"
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migrations from "./Migrations.ts"
import * as PgliteClient from "./PgliteClient.ts"
import * as PgliteTemplate from "./PgliteTemplate.ts"

/**
 * Makes the embedded database's two templates (`PgliteTemplate.ts`): the build runs this module
 * after compiling `dist/`, whose migration files the migrated template records beside the sources'.
 */
export const make = async (): Promise<ReadonlyArray<string>> => {
  const version = PgliteTemplate.pgliteVersion()
  const initdbPath = PgliteTemplate.file(version, "initdb")
  const migratedPath = PgliteTemplate.file(version, "migrated")
  const manifestPath = PgliteTemplate.manifestFile(version)
  if (version === undefined || initdbPath === undefined || migratedPath === undefined || manifestPath === undefined)
    throw new Error("PGlite's version could not be read")
  const db = await PGlite.create("memory://")
  try {
    const tarball = await db.dumpDataDir("gzip")
    writeFileSync(initdbPath, Buffer.from(await tarball.arrayBuffer()))
  } finally {
    await db.close()
  }
  const applied = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        yield* Migrations.run
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ migration_id: number; name: string }>`
          SELECT migration_id, name FROM ${sql(Migrations.TABLE)} ORDER BY migration_id`.withoutTransform
        const pglite = yield* PgliteClient.Pglite
        // Written out, so the copy starts without replaying the migrations' WAL.
        yield* Effect.promise(() => pglite.query("CHECKPOINT"))
        const tarball = yield* Effect.promise(() => pglite.dumpDataDir("gzip"))
        writeFileSync(migratedPath, Buffer.from(yield* Effect.promise(() => tarball.arrayBuffer())))
        return rows
      }).pipe(Effect.provide(PgliteClient.layer(undefined, "initdb")))
    )
  )
  const keys = applied.map((row) => `${String(row.migration_id).padStart(4, "0")}_${row.name}`)
  const migrations: Partial<Record<PgliteTemplate.Form, PgliteTemplate.Hashes>> = {}
  for (const form of ["src", "dist"] as const) {
    const hashes = PgliteTemplate.migrationHashes(form)
    // Every applied migration must be a file of its own named after its key (Migration.ts), or the
    // template could not tell an edited one; a form without them (no dist/ yet) is left out.
    if (Object.keys(hashes).length === 0) continue
    const missing = keys.filter((key) => hashes[key] === undefined)
    const extra = Object.keys(hashes).filter((key) => !keys.includes(key))
    if (missing.length > 0 || extra.length > 0)
      throw new Error(
        `the migration files of ${form}/ are not the migrations applied: missing ${missing.join(", ") || "none"}, ` +
          `not applied ${extra.join(", ") || "none"}`
      )
    migrations[form] = hashes
  }
  if (migrations.src === undefined) throw new Error("no migration file found under src/")
  const manifest: PgliteTemplate.Manifest = { pglite: version, migrations }
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 1)}\n`)
  return [initdbPath, migratedPath]
}

if (import.meta.main) console.log(`build: the embedded database's templates written to ${(await make()).join(" and ")}`)

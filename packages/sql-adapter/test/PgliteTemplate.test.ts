import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, describe, expect, it } from "vitest"
import * as PgliteClient from "../src/PgliteClient.ts"
import * as PgliteTemplate from "../src/PgliteTemplate.ts"

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
})

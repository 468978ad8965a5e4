import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Database from "@leadline/sql-adapter/Database"

export interface TestDatabase {
  readonly kind: "postgres" | "pglite"
  /** What ran, for the test output: "PostgreSQL (schema t_…)" or "PGlite (in memory)". */
  readonly label: string
  readonly config: Database.Config
  /** Drops what `make` created. */
  readonly dispose: () => Promise<void>
}

const adminQuery = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(statement)
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
    )
  )

/**
 * A fresh database for one test suite: a new schema on the PostgreSQL server of
 * `TEST_DATABASE_URL` when it is set, else an in-memory PGlite. It logs which.
 * (No Docker engine runs on our machines, so testcontainers is not tried.)
 */
export const make = async (
  options: { readonly postgres?: "when-configured" | "never" } = {}
): Promise<TestDatabase> => {
  const url = process.env.TEST_DATABASE_URL
  if (url === undefined || url === "" || options.postgres === "never") {
    console.log("test database: PGlite (in memory)")
    return {
      kind: "pglite",
      label: "PGlite (in memory)",
      config: { dataDir: Database.MEMORY },
      dispose: async () => {}
    }
  }
  const schema = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await adminQuery(url, `CREATE SCHEMA ${schema}`)
  console.log(`test database: PostgreSQL (TEST_DATABASE_URL, schema ${schema})`)
  return {
    kind: "postgres",
    label: `PostgreSQL (schema ${schema})`,
    config: { url: Redacted.make(url), dataDir: Database.MEMORY, schema, maxConnections: 10 },
    dispose: () => adminQuery(url, `DROP SCHEMA ${schema} CASCADE`)
  }
}

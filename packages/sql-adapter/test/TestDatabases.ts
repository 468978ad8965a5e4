import { Effect, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Database from "../src/Database.ts"

/**
 * The databases a schema test runs on: the embedded PGlite always, and the PostgreSQL server of
 * `TEST_DATABASE_URL` when it is set, in a fresh schema dropped afterwards (the testkit's
 * `TestDatabase` does the same for the suites above this package, which cannot import it).
 */
export interface TestDatabase {
  readonly name: string
  /** A client on it, without migrations; `dispose` drops what `open` made. */
  readonly open: () => Promise<{ readonly config: Database.Config; readonly dispose: () => Promise<void> }>
}

const url = process.env.TEST_DATABASE_URL

const onServer = (statement: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
        Effect.provide(Database.client({ url: Redacted.make(url!), dataDir: Database.MEMORY, maxConnections: 1 }))
      )
    )
  )

export const all: ReadonlyArray<TestDatabase> = [
  {
    name: "embedded PGlite",
    open: async () => ({ config: { dataDir: Database.MEMORY }, dispose: async () => {} })
  },
  ...(url === undefined || url === ""
    ? []
    : [
        {
          name: "PostgreSQL (TEST_DATABASE_URL)",
          open: async () => {
            const schema = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
            await onServer(`CREATE SCHEMA ${schema}`)
            return {
              config: { url: Redacted.make(url), dataDir: Database.MEMORY, schema, maxConnections: 4 },
              dispose: () => onServer(`DROP SCHEMA ${schema} CASCADE`).then(() => undefined)
            }
          }
        }
      ])
]

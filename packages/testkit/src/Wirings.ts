import type { Layer } from "effect"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as TestDatabase from "./TestDatabase.ts"

/** An app layer for `TestServer.start`, and what to clean up after the server is closed. */
export interface Wired {
  readonly app: Layer.Layer<any, unknown>
  readonly dispose: () => Promise<void>
}

/**
 * The two wirings a test that starts its own server runs on: in memory, and SQL on a fresh
 * database (the PostgreSQL server of `TEST_DATABASE_URL`, else embedded PGlite).
 */
export const wirings: ReadonlyArray<readonly [name: string, wire: () => Promise<Wired>]> = [
  ["in memory", async () => ({ app: MemoryApp.layer, dispose: async () => {} })],
  [
    "on SQL",
    async () => {
      const database = await TestDatabase.make()
      return { app: SqlApp.layer(database.config), dispose: () => database.dispose() }
    }
  ]
]

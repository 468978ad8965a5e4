import { Effect } from "effect"
import * as Database from "@leadline/sql-adapter/Database"
import { databaseConfig, ServerConfig } from "./Config.ts"

/**
 * Applies the database migrations (the server also does at start) and returns
 * what it applied. With the embedded database, the server must not be running:
 * PGlite's files belong to one process at a time.
 */
export const migrate = Effect.gen(function* () {
  const config = yield* ServerConfig
  return yield* Database.migrate.pipe(Effect.provide(Database.client(databaseConfig(config))))
})

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * `GET /api/keys` pages an account's keys newest first: this index serves the page without
 * sorting, and replaces the plain one on `account_id` (its leading column serves those lookups).
 */
export const migration = Migration.make(
  "0021_api_keys_newest_first",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX api_keys_newest_first ON api_keys (account_id, created_at DESC, id DESC)`
    yield* sql`DROP INDEX api_keys_account`
  })
)

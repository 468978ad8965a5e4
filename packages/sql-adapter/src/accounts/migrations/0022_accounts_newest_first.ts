import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/** The operator's `GET /admin/v1/accounts` pages every account newest first: this index serves it without sorting. */
export const migration = Migration.make(
  "0022_accounts_newest_first",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX accounts_newest_first ON accounts (created_at DESC, id DESC)`
  })
)

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * `GET /api/v1/events` reads an account's events newest first by id (a ULID, so in the order they
 * were recorded) and pages by id: this index walks them from the top or from a cursor.
 */
export const migration = Migration.make(
  "0040_events_by_account",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX events_account_newest ON events (account_id, id DESC)`
  })
)

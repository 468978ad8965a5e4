import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Analytics counts an account's messages by creation time and kind: this index answers those
 * counts from itself (an index-only scan where the table is vacuumed), whatever the volume.
 */
export const migration = Migration.make(
  "0017_messages_by_time",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX messages_by_time ON messages (account_id, created_at)
               INCLUDE (direction, status, sender_type)`
  })
)

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * `messages_by_time` (0017) served analytics' live counts by creation time; since the tallies
 * (0020) nothing reads it, and every message paid for it: one index entry more per message, 100,000
 * for a campaign's queue.
 */
export const migration = Migration.make(
  "0025_messages_by_time_dropped",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DROP INDEX messages_by_time`
  })
)

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * `conversations_by_creation` (0019) served analytics' live counts of conversations started; since
 * the tallies (0020) nothing reads it, and every new conversation paid for it (100,000 for a
 * campaign to leads without one).
 */
export const migration = Migration.make(
  "0026_conversations_by_creation_dropped",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DROP INDEX conversations_by_creation`
  })
)

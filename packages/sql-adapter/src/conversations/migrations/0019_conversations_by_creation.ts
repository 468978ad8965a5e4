import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/** Analytics counts the conversations started in a range: one is made with its first message. */
export const migration = Migration.make(
  "0019_conversations_by_creation",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX conversations_by_creation ON conversations (account_id, created_at)`
  })
)

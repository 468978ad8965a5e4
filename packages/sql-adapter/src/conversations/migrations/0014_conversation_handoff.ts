import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/** An agent's handoff of a conversation to a person (`{agent_id, reason, at}`), null while agents may answer it. */
export const migration = Migration.make(
  "0014_conversation_handoff",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE conversations ADD COLUMN handoff jsonb`
  })
)

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * One thread per lead and channel, keyed lead first: deleting a lead (its conversations by the
 * foreign key's cascade, its messages through them) found them with `lead_id` the third column of
 * `(account_id, channel_id, lead_id)`, so it read every thread of the account. The same unique key
 * with the columns reordered serves both; `ON CONFLICT (account_id, channel_id, lead_id)` infers
 * its arbiter from the columns, whatever their order.
 */
export const migration = Migration.make(
  "0028_conversations_by_lead",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE UNIQUE INDEX conversations_by_lead ON conversations (account_id, lead_id, channel_id)`
    yield* sql`ALTER TABLE conversations DROP CONSTRAINT conversations_account_id_channel_id_lead_id_key`
  })
)

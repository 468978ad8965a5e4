import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * A recipient's foreign key to its campaign checked the same campaign row once per recipient:
 * 100,000 checks for a queue that holds that row locked all along (the queue and the delete of a
 * draft both take it `FOR UPDATE`, and only drafts, which have no recipients, are deleted). The
 * delete removes a campaign's recipients in its own statement instead of by cascade.
 */
export const migration = Migration.make(
  "0024_recipients_without_campaign_key",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE campaign_recipients DROP CONSTRAINT campaign_recipients_account_id_campaign_id_fkey`
  })
)

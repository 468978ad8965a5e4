import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * The id of the key that sealed a channel's access token (`sealing/Keyring.ts`); NULL while the
 * token is kept unsealed (a server with no `LEADLINE_ENCRYPTION_KEY`, or a row from before
 * sealing). A column rather than a guess from the value's shape: a caller's token may look like
 * anything, and the start-up check reads which keys the rows need from it.
 */
export const migration = Migration.make(
  "0032_channel_token_keys",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE channels ADD COLUMN access_token_key text`
  })
)

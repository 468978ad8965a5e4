import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Interactive messages and replies (docs/contract-messaging.md §5.4 to §5.6): `interactive`, an
 * outbound interactive message as sent; `reply_to`, `{message_id, external_id}` of the message
 * an inbound one answers (WhatsApp's `context`) or a reaction reacts to. Both nullable, so adding
 * them rewrites no row.
 */
export const migration = Migration.make(
  "0033_interactive_and_replies",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE messages ADD COLUMN interactive jsonb, ADD COLUMN reply_to jsonb`
  })
)

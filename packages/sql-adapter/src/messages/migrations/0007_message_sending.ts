import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * What the sender needs on a message (docs/contract-messaging.md §7.1): its lane (0 replies, 1
 * campaigns), when it may go, the lease of the sender holding it, and when a send began
 * (committed before the provider is called, so a sender that dies mid-call is noticed).
 */
export const migration = Migration.make(
  "0007_message_sending",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE messages
      ADD COLUMN priority smallint NOT NULL DEFAULT 0,
      ADD COLUMN not_before timestamptz,
      ADD COLUMN lease_until timestamptz,
      ADD COLUMN lease_owner text,
      ADD COLUMN sending_since timestamptz,
      ADD COLUMN attempts integer NOT NULL DEFAULT 0`
    yield* sql`CREATE INDEX messages_queued ON messages (priority, not_before, id) WHERE status = 'queued'`
  })
)

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * What Meta's account webhooks say of a number's health (docs/contract-messaging.md §3.1), and the
 * business account's index they are routed by.
 */
export const migration = Migration.make(
  "0036_channel_health",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE channels
      ADD COLUMN quality_rating text NOT NULL DEFAULT 'unknown',
      ADD COLUMN messaging_limit_tier text,
      ADD COLUMN restrictions jsonb NOT NULL DEFAULT '[]'`
    yield* sql`CREATE INDEX channels_by_business_account ON channels (business_account_id)
      WHERE business_account_id IS NOT NULL`
  })
)

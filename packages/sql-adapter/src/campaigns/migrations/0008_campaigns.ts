import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Campaigns and the recipients each snapshotted when it was queued (docs/contract-messaging.md §8). A
 * recipient keeps no foreign key to its lead: a lead deleted later still shows in the list, as
 * skipped. Stats are counted from the messages by `(campaign_id, status)`, never kept in a row
 * that every status webhook would have to update.
 */
export const migration = Migration.make(
  "0008_campaigns",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE campaigns (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      name text NOT NULL,
      channel_id text,
      template jsonb NOT NULL,
      audience jsonb NOT NULL,
      scheduled_at timestamptz,
      status text NOT NULL,
      error jsonb,
      total integer NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      queued_at timestamptz,
      started_at timestamptz,
      completed_at timestamptz,
      cancelled_at timestamptz,
      PRIMARY KEY (account_id, id)
    )`
    yield* sql`CREATE INDEX campaigns_newest_first ON campaigns (account_id, created_at DESC, id DESC)`
    yield* sql`CREATE TABLE campaign_recipients (
      account_id uuid NOT NULL,
      campaign_id text NOT NULL,
      lead_id text NOT NULL,
      phone text NOT NULL,
      message_id text,
      skipped jsonb,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, campaign_id, lead_id),
      FOREIGN KEY (account_id, campaign_id) REFERENCES campaigns (account_id, id) ON DELETE CASCADE
    )`
    // Stats, completion and cancel read a campaign's messages by status.
    yield* sql`CREATE INDEX messages_by_campaign ON messages (account_id, campaign_id, status)
               WHERE campaign_id IS NOT NULL`
  })
)

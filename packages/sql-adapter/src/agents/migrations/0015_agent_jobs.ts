import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * The inbound messages agents are to answer: one row per message (Meta's redeliveries make none
 * more), written with the message; responders claim the due ones with `FOR UPDATE SKIP LOCKED`
 * and a lease, so several processes share them and a dead one's jobs go to another.
 */
export const migration = Migration.make(
  "0015_agent_jobs",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE agent_jobs (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      conversation_id text NOT NULL,
      message_id text NOT NULL,
      agent_id text NOT NULL,
      status text NOT NULL,
      attempts integer NOT NULL,
      available_at timestamptz NOT NULL,
      lease_until timestamptz,
      outcome text,
      error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, id),
      UNIQUE (account_id, message_id)
    )`
    // Serves the claim: the due jobs only, oldest first.
    yield* sql`CREATE INDEX agent_jobs_due ON agent_jobs (available_at) WHERE status = 'pending'`
  })
)

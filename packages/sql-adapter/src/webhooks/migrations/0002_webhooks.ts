import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/** Endpoints, deliveries and attempts; and the body of each event exactly as it is sent. */
export const migration = Migration.make(
  "0002_webhooks",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // The envelope as sent: jsonb would reorder its keys, and every attempt should send the same bytes.
    yield* sql`ALTER TABLE events ADD COLUMN body text`
    yield* sql`CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      url text NOT NULL,
      events jsonb NOT NULL,
      description text,
      secret text NOT NULL,
      enabled boolean NOT NULL,
      created_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`
    yield* sql`CREATE INDEX webhook_endpoints_newest_first ON webhook_endpoints (account_id, created_at DESC, id DESC)
               WHERE deleted_at IS NULL`
    yield* sql`CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      event_id text NOT NULL REFERENCES events (id),
      event_type text NOT NULL,
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id),
      status text NOT NULL,
      round_attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      lease_until timestamptz,
      lease_owner text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
    // What the worker asks for: pending deliveries in due order.
    yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
    yield* sql`CREATE INDEX webhook_deliveries_newest_first ON webhook_deliveries (account_id, created_at DESC, id DESC)`
    yield* sql`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status)`
    yield* sql`CREATE TABLE webhook_attempts (
      delivery_id text NOT NULL REFERENCES webhook_deliveries (id),
      number integer NOT NULL,
      attempted_at timestamptz NOT NULL,
      status_code integer,
      duration_ms integer NOT NULL,
      error text,
      PRIMARY KEY (delivery_id, number)
    )`
  })
)

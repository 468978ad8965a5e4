import { Effect } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"

/**
 * The schema, as numbered migrations applied in order at start (and by
 * `leadline migrate`). Never edit a released migration: add the next number.
 */
const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_accounts_leads_idempotency_events": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE accounts (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      owner_user_id uuid NOT NULL,
      plan_id text NOT NULL,
      subscription_status text NOT NULL,
      created_at timestamptz NOT NULL
    )`
    yield* sql`CREATE TABLE users (
      id uuid PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      role text NOT NULL,
      created_at timestamptz NOT NULL
    )`
    yield* sql`CREATE INDEX users_account ON users (account_id)`
    yield* sql`CREATE TABLE api_keys (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      user_id uuid NOT NULL REFERENCES users (id),
      name text NOT NULL,
      scopes jsonb NOT NULL,
      hash text NOT NULL UNIQUE,
      prefix text NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`
    yield* sql`CREATE INDEX api_keys_account ON api_keys (account_id)`
    yield* sql`CREATE TABLE leads (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      name text NOT NULL,
      phone text NOT NULL,
      email text,
      tags jsonb NOT NULL,
      status text NOT NULL,
      assigned_user_id uuid,
      attributes jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, id),
      UNIQUE (account_id, phone)
    )`
    // Serves the newest-first page of one account without sorting.
    yield* sql`CREATE INDEX leads_newest_first ON leads (account_id, created_at DESC, id DESC)`
    // meta.total without counting rows: kept in step with inserts and deletes.
    yield* sql`CREATE TABLE lead_counts (
      account_id uuid PRIMARY KEY REFERENCES accounts (id),
      total integer NOT NULL
    )`
    yield* sql`CREATE TABLE idempotency_keys (
      account_id uuid NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      status integer,
      content_type text,
      body text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, key)
    )`
    yield* sql`CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)`
    yield* sql`CREATE TABLE events (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      type text NOT NULL,
      created_at timestamptz NOT NULL,
      payload jsonb NOT NULL
    )`
    yield* sql`CREATE INDEX events_account ON events (account_id, created_at)`
  }),
  "0002_webhooks": Effect.gen(function* () {
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
}

export const run = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "leadline_migrations" })

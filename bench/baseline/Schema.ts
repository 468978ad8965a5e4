/**
 * The baseline's own schema, written from the contract (docs/contract.md), not from
 * Leadline's migrations. The server applies it on start; every statement is
 * idempotent, and an advisory lock keeps two processes from racing on it.
 *
 * Choices, in the words of the engineer who would write this by hand:
 * - API keys are stored as the SHA-256 of the key (bytea, unique): authentication is one
 *   indexed lookup joined to the key's user and account by primary key.
 * - Leads: one row per lead, phone unique per account (the contract's 409), and one
 *   composite index for the list route's `WHERE account_id ORDER BY created_at DESC, id DESC`.
 *   There is no counter table: the list's `total` is `count(*)` over that index.
 * - The assignee must be a user of the lead's account: a composite foreign key says so.
 * - Events and their deliveries are written in the creating transaction (the contract's
 *   outbox rule); pending deliveries have a partial index for the worker that would send them.
 * - Idempotency records are keyed by (account, key) and purged after 24 hours.
 */
import type pg from "pg"

export const LEAD_STATUSES = ["new", "contacted", "qualified", "won", "lost"] as const

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS accounts (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  owner_user_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS users (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, id)
);

CREATE TABLE IF NOT EXISTS api_keys (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL,
  user_id uuid NOT NULL,
  key_hash bytea NOT NULL UNIQUE,
  scopes text[] NOT NULL DEFAULT '{}',
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (account_id, user_id) REFERENCES users (account_id, id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS leads (
  id text PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL,
  phone text NOT NULL,
  email text,
  tags text[] NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'new' CHECK (status IN (${LEAD_STATUSES.map((s) => `'${s}'`).join(", ")})),
  assigned_user_id uuid,
  attributes jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, phone),
  FOREIGN KEY (account_id, assigned_user_id) REFERENCES users (account_id, id)
);
CREATE INDEX IF NOT EXISTS leads_account_newest ON leads (account_id, created_at DESC, id DESC);

CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  url text NOT NULL,
  events text[] NOT NULL,
  description text,
  secret text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_account ON webhook_endpoints (account_id);

CREATE TABLE IF NOT EXISTS events (
  id text PRIMARY KEY,
  account_id uuid NOT NULL,
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL
);

-- A time-ordered random id (hex milliseconds, then 64 random bits) for rows made in SQL.
CREATE OR REPLACE FUNCTION baseline_sortable_id() RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
      || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16)
$$;

CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id text PRIMARY KEY DEFAULT ('dlv_' || baseline_sortable_id()),
  event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
  attempts int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE IF NOT EXISTS idempotency_keys (
  account_id uuid NOT NULL,
  key text NOT NULL,
  fingerprint bytea NOT NULL,
  status_code int,
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_at);
`

/** Anything that runs a query: a pool, a client. */
export interface Queryable {
  readonly query: pg.Pool["query"]
}

/**
 * Creates the schema if it is not there: one simple-protocol query, which PostgreSQL runs
 * as one implicit transaction, so the advisory lock is held to its end.
 */
export const migrate = async (db: Queryable): Promise<void> => {
  await db.query(`SELECT pg_advisory_xact_lock(7306228501); ${SCHEMA}`)
}

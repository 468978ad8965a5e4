import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../Migration.ts"

/**
 * The first schema, released before migrations lived in their slices: it makes the
 * tables of accounts, auth, leads, idempotency and the outbox's events at once, and
 * its key is recorded in every database, so it stays whole here. New migrations go
 * in the folder of the slice that owns them.
 */
export const migration = Migration.make(
  "0001_accounts_leads_idempotency_events",
  Effect.gen(function* () {
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
  })
)

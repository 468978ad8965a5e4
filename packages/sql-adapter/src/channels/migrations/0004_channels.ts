import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Connected WhatsApp numbers. `phone_number_id` is unique across accounts: the inbound
 * webhook is routed by it. A small table, so the global lookup is one Citus can
 * replicate to every node (a reference table).
 */
export const migration = Migration.make(
  "0004_channels",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE channels (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      type text NOT NULL,
      name text NOT NULL,
      phone_number_id text NOT NULL UNIQUE,
      display_phone_number text NOT NULL,
      business_account_id text,
      access_token text NOT NULL,
      status text NOT NULL,
      last_error jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, id)
    )`
    yield* sql`CREATE INDEX channels_newest_first ON channels (account_id, created_at DESC, id DESC)`
  })
)

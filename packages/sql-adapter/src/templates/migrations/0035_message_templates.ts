import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * WhatsApp message templates per account and business account (WABA), one row per name and
 * language, as Meta last described them; and per WABA when its list was last synced and until
 * when a process holds its scheduled sync (docs/contract-messaging.md §8.7).
 */
export const migration = Migration.make(
  "0035_message_templates",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE message_templates (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      business_account_id text NOT NULL,
      external_id text,
      name text NOT NULL,
      language text NOT NULL,
      category text NOT NULL,
      status text NOT NULL,
      quality text NOT NULL,
      rejected_reason text,
      components jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, id),
      UNIQUE (account_id, business_account_id, name, language)
    )`
    // Meta's webhooks name a template by its WABA and id, in whichever account holds it.
    yield* sql`CREATE INDEX message_templates_by_meta_id ON message_templates (business_account_id, external_id)`
    yield* sql`CREATE TABLE template_syncs (
      account_id uuid NOT NULL REFERENCES accounts (id),
      business_account_id text NOT NULL,
      synced_at timestamptz,
      claimed_until timestamptz,
      PRIMARY KEY (account_id, business_account_id)
    )`
  })
)

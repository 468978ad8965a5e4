import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Conversations (one per channel and lead) and their messages. Deleting a lead deletes
 * its conversations and their messages (the seed's delete is a hard delete).
 */
export const migration = Migration.make(
  "0005_conversations_messages",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE conversations (
      account_id uuid NOT NULL,
      id text NOT NULL,
      lead_id text NOT NULL,
      channel_id text NOT NULL,
      status text NOT NULL,
      assigned_user_id uuid,
      snoozed_until timestamptz,
      contact_wa_id text,
      last_message_at timestamptz,
      last_inbound_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, id),
      UNIQUE (account_id, channel_id, lead_id),
      FOREIGN KEY (account_id, lead_id) REFERENCES leads (account_id, id) ON DELETE CASCADE,
      FOREIGN KEY (account_id, channel_id) REFERENCES channels (account_id, id)
    )`
    // The inbox: newest activity first (a conversation without messages sorts by its creation).
    yield* sql`CREATE INDEX conversations_latest ON conversations
               (account_id, coalesce(last_message_at, created_at) DESC, id DESC)`
    yield* sql`CREATE INDEX conversations_by_wa_id ON conversations (account_id, channel_id, contact_wa_id)`
    yield* sql`CREATE TABLE messages (
      account_id uuid NOT NULL,
      id text NOT NULL,
      conversation_id text NOT NULL,
      lead_id text NOT NULL,
      channel_id text NOT NULL,
      direction text NOT NULL,
      type text NOT NULL,
      text text,
      template jsonb,
      media jsonb,
      status text NOT NULL,
      error jsonb,
      external_id text,
      sender_type text NOT NULL,
      sender_id text,
      campaign_id text,
      scheduled_at timestamptz,
      provider_timestamp timestamptz,
      provider_payload text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      sent_at timestamptz,
      delivered_at timestamptz,
      read_at timestamptz,
      failed_at timestamptz,
      PRIMARY KEY (account_id, id),
      FOREIGN KEY (account_id, conversation_id) REFERENCES conversations (account_id, id) ON DELETE CASCADE
    )`
    // WhatsApp redelivers: the second copy of a wamid is found here, not stored.
    yield* sql`CREATE UNIQUE INDEX messages_external_id ON messages (account_id, channel_id, external_id)
               WHERE external_id IS NOT NULL`
    yield* sql`CREATE INDEX messages_newest_first ON messages (account_id, conversation_id, created_at DESC, id DESC)`
  })
)

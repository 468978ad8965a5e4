import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Orders (docs/contract-commerce-ai.md §3). The lines are immutable snapshots of their products, kept
 * as jsonb in the order's row, and no foreign key names a lead or a product: a deleted product's
 * lines stay readable. A WhatsApp message (wamid) places at most one order in its account: the
 * partial unique index, which orders from the API (no wamid) stay out of.
 */
export const migration = Migration.make(
  "0010_orders",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE orders (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      lead_id text NOT NULL,
      status text NOT NULL,
      payment_status text NOT NULL,
      currency text NOT NULL,
      items jsonb NOT NULL,
      amount_subtotal bigint NOT NULL,
      amount_shipping bigint NOT NULL,
      amount_discount bigint NOT NULL,
      amount_total bigint NOT NULL,
      note text,
      tracking jsonb,
      source text NOT NULL,
      whatsapp_message_id text,
      metadata jsonb NOT NULL,
      version integer NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      confirmed_at timestamptz,
      shipped_at timestamptz,
      delivered_at timestamptz,
      cancelled_at timestamptz,
      paid_at timestamptz,
      refunded_at timestamptz,
      PRIMARY KEY (account_id, id)
    )`
    yield* sql`CREATE UNIQUE INDEX orders_by_whatsapp_message ON orders (account_id, whatsapp_message_id)
               WHERE whatsapp_message_id IS NOT NULL`
    // The newest-first page, of the account and of one lead, without sorting.
    yield* sql`CREATE INDEX orders_newest_first ON orders (account_id, created_at DESC, id DESC)`
    yield* sql`CREATE INDEX orders_by_lead ON orders (account_id, lead_id, created_at DESC, id DESC)`
  })
)

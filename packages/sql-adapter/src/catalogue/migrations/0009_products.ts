import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * The catalogue (docs/contract-commerce-ai.md §2). A SKU is unique in its account: orders name products
 * by it. `stock` is null when it is not tracked; the check is a last guard, as `takeStock` never
 * takes more than it read under the row lock.
 */
export const migration = Migration.make(
  "0009_products",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE products (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      sku text NOT NULL,
      name text NOT NULL,
      description text,
      unit_amount bigint NOT NULL,
      currency text NOT NULL,
      stock integer CHECK (stock >= 0),
      active boolean NOT NULL,
      image_url text,
      url text,
      attributes jsonb NOT NULL,
      version integer NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, id),
      UNIQUE (account_id, sku)
    )`
    // Serves the newest-first page of one account without sorting.
    yield* sql`CREATE INDEX products_newest_first ON products (account_id, created_at DESC, id DESC)`
  })
)

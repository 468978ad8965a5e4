import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * A tracked product's stock, striped over 16 rows (docs/performance.md, "One hot product"): an
 * order takes its units from the stripe of its connection, so orders for one product wait on
 * each other only when their connections share a stripe. The product's `stock` is the stripes'
 * sum, its `version` its own plus every stock move (`moves`), its `updated_at` the later of its
 * own and the last move's; a product without stripes is not tracked (`stock` null). The stock
 * an existing product had is spread over its stripes, and `products.stock` goes.
 */
export const migration = Migration.make(
  "0030_product_stock_stripes",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE product_stock (
      account_id uuid NOT NULL,
      product_id text NOT NULL,
      stripe smallint NOT NULL CHECK (stripe >= 0 AND stripe < 16),
      stock integer NOT NULL CHECK (stock >= 0),
      moves integer NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, product_id, stripe),
      -- Checked at commit: a product and its stripes are inserted by one statement, whose own check
      -- would not see the product yet. Deleting a product deletes its stripes at once.
      FOREIGN KEY (account_id, product_id) REFERENCES products (account_id, id)
        ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
    )`
    yield* sql`INSERT INTO product_stock (account_id, product_id, stripe, stock, moves, updated_at)
      SELECT p.account_id, p.id, s, p.stock / 16 + CASE WHEN s < p.stock % 16 THEN 1 ELSE 0 END, 0, p.updated_at
      FROM products AS p CROSS JOIN generate_series(0, 15) AS s
      WHERE p.stock IS NOT NULL`
    yield* sql`ALTER TABLE products DROP COLUMN stock`
  })
)

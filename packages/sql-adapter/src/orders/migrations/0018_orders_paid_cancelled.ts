import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/** Analytics reads revenue by `paid_at` and cancellations by `cancelled_at`; most orders have neither. */
export const migration = Migration.make(
  "0018_orders_paid_cancelled",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX orders_paid ON orders (account_id, paid_at) INCLUDE (currency, amount_total, payment_status)
               WHERE paid_at IS NOT NULL`
    yield* sql`CREATE INDEX orders_cancelled ON orders (account_id, cancelled_at) WHERE cancelled_at IS NOT NULL`
  })
)

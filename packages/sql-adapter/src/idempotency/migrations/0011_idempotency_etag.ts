import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * The `ETag` a kept response went out with (a product's or an order's create), so that a replay
 * carries it too: a client that retries a create and then PATCHes with `If-Match` needs it.
 */
export const migration = Migration.make(
  "0011_idempotency_etag",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE idempotency_keys ADD COLUMN etag text`
  })
)

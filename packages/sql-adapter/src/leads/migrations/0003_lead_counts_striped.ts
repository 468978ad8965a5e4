import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * An account's lead count over several rows, summed on read: with one row, every
 * create of the account waited for the previous one's row lock until it committed
 * (docs/performance.md, "Per-account counters"). Existing totals stay as stripe 0.
 */
export const migration = Migration.make(
  "0003_lead_counts_striped",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE lead_counts ADD COLUMN stripe smallint NOT NULL DEFAULT 0`
    yield* sql`ALTER TABLE lead_counts DROP CONSTRAINT lead_counts_pkey`
    yield* sql`ALTER TABLE lead_counts ADD PRIMARY KEY (account_id, stripe)`
  })
)

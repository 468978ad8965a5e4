import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * A SQL function returning a table is planned at 1,000 rows a call, so the statement tally of a
 * campaign's 5,000 messages was costed at 5,000,000 rows: over `jit_above_cost`, PostgreSQL
 * JIT-compiled it, with inlining and optimization, on every statement. That took 260-300 ms of
 * the 1.1 s each batch of 5,000 recipients took to queue, twice (messages and conversations), for
 * a grouping that runs in 2 ms. A row counts in one or two metrics (an order in up to four): the
 * metrics functions now say so, and the statement tallies never JIT-compile (bench/CAMPAIGNS.md).
 */
export const migration = Migration.make(
  "0023_tallies_planned_small",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const table of ["leads", "conversations", "messages", "orders"]) {
      yield* sql.unsafe(`ALTER FUNCTION ${table}_metrics(${table}) ROWS 2`)
    }
    for (const table of ["conversations", "messages"]) {
      yield* sql.unsafe(`ALTER FUNCTION ${table}_tally() SET jit = off`)
    }
  })
)

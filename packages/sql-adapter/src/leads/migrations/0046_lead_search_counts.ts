import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * The name and email indexes carry the column they are made from, so a search can count its matches
 * in them without reading the table: PostgreSQL answers from an index alone only when every column the
 * query names is in it, and an index on `lower(name)` holds the lowered value, not `name` itself
 * (`SqlLeads.matchesQuery`; docs/performance.md, "A search that matches few leads"). The phone index
 * already holds `phone`.
 */
export const migration = Migration.make(
  "0046_lead_search_counts",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DROP INDEX leads_by_name`
    yield* sql`CREATE INDEX leads_by_name ON leads (account_id, (lower(name) COLLATE "C"), id) INCLUDE (name)`
    yield* sql`DROP INDEX leads_by_email`
    yield* sql`CREATE INDEX leads_by_email ON leads (account_id, (lower(email) COLLATE "C")) INCLUDE (email)
               WHERE email IS NOT NULL`
  })
)

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * What `GET /api/v1/leads` finds and sorts by besides the newest first (`leads_newest_first`):
 * the recently changed, names (sorted and searched by prefix, in lower case under the C collation,
 * whatever the database's), emails and phones by prefix (docs/contract.md, "Finding leads").
 * Statuses, tags and assignees are read along the list's own order: each index is paid by every
 * create, and a page of a common status is found within a few hundred rows.
 */
export const migration = Migration.make(
  "0038_lead_search_indexes",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX leads_recently_updated ON leads (account_id, updated_at DESC, id DESC)`
    yield* sql`CREATE INDEX leads_by_name ON leads (account_id, (lower(name) COLLATE "C"), id)`
    yield* sql`CREATE INDEX leads_by_email ON leads (account_id, (lower(email) COLLATE "C")) WHERE email IS NOT NULL`
    yield* sql`CREATE INDEX leads_by_phone ON leads (account_id, (phone COLLATE "C"))`
  })
)

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * `url` sources (docs/contract-commerce-ai.md §4): a URL is a source once per account; a fetcher holds a
 * `processing` one with a lease while it fetches, so several processes share them and a dead one's
 * source goes to another.
 */
export const migration = Migration.make(
  "0016_knowledge_urls",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE knowledge_sources ADD COLUMN fetch_lease_until timestamptz`
    yield* sql`CREATE UNIQUE INDEX knowledge_sources_url ON knowledge_sources (account_id, url) WHERE url IS NOT NULL`
    yield* sql`CREATE INDEX knowledge_sources_processing ON knowledge_sources (updated_at) WHERE status = 'processing'`
  })
)

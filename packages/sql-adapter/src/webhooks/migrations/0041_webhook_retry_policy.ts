import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Each endpoint's schedule of retries (docs/contract.md, "Webhooks"): `seed` (the seed's 1, 2 and
 * 4 s, every endpoint's until now) or `extended` (Svix's, over about 27.6 hours).
 */
export const migration = Migration.make(
  "0041_webhook_retry_policy",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE webhook_endpoints ADD COLUMN retry_policy text NOT NULL DEFAULT 'seed'
               CHECK (retry_policy IN ('seed', 'extended'))`
  })
)

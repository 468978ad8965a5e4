import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Webhook endpoints as integrators keep them (docs/contract.md, "Webhooks"):
 * - a delivery's `ordering_key` (the lead its event is about): an endpoint gets one lead's events
 *   in order, the later one waiting while an earlier one is still pending; the partial index finds
 *   the earlier pending one for a claim;
 * - a rotated secret kept until its overlap ends, deliveries signed with both meanwhile;
 * - `failing_since`: the first failed attempt since the endpoint's last success, from which an
 *   endpoint that keeps failing is disabled.
 */
export const migration = Migration.make(
  "0043_webhook_order_rotation_health",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN ordering_key text`
    yield* sql`CREATE INDEX webhook_deliveries_pending_by_key ON webhook_deliveries (endpoint_id, ordering_key, id)
               WHERE status = 'pending' AND ordering_key IS NOT NULL`
    yield* sql`ALTER TABLE webhook_endpoints ADD COLUMN previous_secret text,
                                             ADD COLUMN previous_secret_expires_at timestamptz,
                                             ADD COLUMN failing_since timestamptz`
  })
)

import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Outbox } from "@leadline/core/events/Outbox"
import * as Ids from "@leadline/core/Ids"
import { orDie } from "../internal/store.ts"
import { DELIVERIES_CHANNEL } from "../Notifications.ts"

/**
 * An event goes into `events`, with one pending delivery per endpoint subscribed
 * to its type, inside the caller's transaction; `pg_notify` wakes the workers
 * when (and only if) that transaction commits.
 */
export const layer = Layer.effect(
  Outbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return Outbox.of({
      append: (event) =>
        orDie(
          Effect.gen(function* () {
            const body = JSON.stringify(event)
            // One round trip for the event and who subscribes to it (a CTE's INSERT runs
            // whether or not the query reads it), one more only when someone does.
            const subscribed = yield* sql<{ id: string }>`
              WITH recorded AS (
                INSERT INTO events (id, account_id, type, created_at, payload, body)
                VALUES (${event.id}, ${event.account_id}::uuid, ${event.type}, ${event.created_at}::timestamptz,
                        ${body}::jsonb, ${body})
              )
              SELECT id FROM webhook_endpoints
              WHERE account_id = ${event.account_id}::uuid AND deleted_at IS NULL AND enabled
                AND events @> jsonb_build_array(${event.type}::text)`
            if (subscribed.length === 0) return
            const rows = []
            for (const endpoint of subscribed) {
              rows.push({
                id: yield* Ids.make("dlv"),
                account_id: event.account_id,
                event_id: event.id,
                event_type: event.type,
                endpoint_id: endpoint.id,
                status: "pending",
                next_attempt_at: event.created_at,
                created_at: event.created_at,
                updated_at: event.created_at
              })
            }
            yield* sql`WITH queued AS (INSERT INTO webhook_deliveries ${sql.insert(rows)} RETURNING 1)
                       SELECT pg_notify(${DELIVERIES_CHANNEL}, '') FROM (SELECT 1 FROM queued LIMIT 1) AS one`
          })
        )
    })
  })
)

import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Outbox } from "@leadline/core/events/Outbox"
import * as Ids from "@leadline/core/Ids"
import { orDie } from "../internal/store.ts"
import { DELIVERIES_CHANNEL } from "../Notifications.ts"

/**
 * Events go into `events`, with one pending delivery per endpoint subscribed to each
 * one's type, inside the caller's transaction; `pg_notify` wakes the workers when (and
 * only if) that transaction commits. A batch costs the same two round trips as one event.
 */
export const layer = Layer.effect(
  Outbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return Outbox.of({
      append: (events) =>
        orDie(
          Effect.gen(function* () {
            if (events.length === 0) return
            const rows = events.map((event) => {
              const body = JSON.stringify(event)
              return {
                id: event.id,
                account_id: event.account_id,
                type: event.type,
                created_at: event.created_at,
                payload: body,
                body
              }
            })
            const accounts = [...new Set(events.map((event) => event.account_id))]
            // One round trip for the events and who subscribes to them (a CTE's INSERT runs
            // whether or not the query reads it), one more only when someone does.
            const endpoints = yield* sql<{ id: string; account_id: string; events: string }>`
              WITH recorded AS (INSERT INTO events ${sql.insert(rows)})
              SELECT id, account_id::text AS account_id, events::text AS events FROM webhook_endpoints
              WHERE account_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(accounts)}::jsonb)::uuid)
                AND deleted_at IS NULL AND enabled`
            if (endpoints.length === 0) return
            const subscribed = endpoints.map((endpoint) => ({
              id: endpoint.id,
              accountId: endpoint.account_id,
              types: new Set(JSON.parse(endpoint.events) as ReadonlyArray<string>)
            }))
            const deliveries = []
            for (const event of events) {
              for (const endpoint of subscribed) {
                if (endpoint.accountId !== event.account_id || !endpoint.types.has(event.type)) continue
                deliveries.push({
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
            }
            if (deliveries.length === 0) return
            yield* sql`WITH queued AS (INSERT INTO webhook_deliveries ${sql.insert(deliveries)} RETURNING 1)
                       SELECT pg_notify(${DELIVERIES_CHANNEL}, '') FROM (SELECT 1 FROM queued LIMIT 1) AS one`
          })
        )
    })
  })
)

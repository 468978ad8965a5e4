import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { orderingKeyOf } from "@leadline/core/events/Event"
import { Outbox } from "@leadline/core/events/Outbox"
import { DELIVERIES_CHANNEL, EVENTS_CHANNEL, Notifications } from "../Notifications.ts"
import { afterCommit, Signalling, writeBehind } from "../UnitOfWork.ts"

/**
 * Events go into `events`, with one pending delivery per endpoint subscribed to each
 * one's type, inside the caller's unit of work. Once that unit has committed, the event streams are
 * woken, and the webhook workers too if it queued a delivery (Notifications.ts: announced after the
 * commit, never inside it). Both are writes behind (UnitOfWork.ts): they cost no round trip of
 * their own, whatever the batch holds. A delivery's id is its
 * event's ULID and its rank among the event's endpoints, so it is made in the statement
 * that finds the endpoints.
 */
export const layer = Layer.effect(
  Outbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* Notifications
    const eventsCommitted = afterCommit(notifications.announce(EVENTS_CHANNEL))
    const deliveriesCommitted = notifications.announce(DELIVERIES_CHANNEL)
    return Outbox.of({
      append: (events) => {
        if (events.length === 0) return Effect.void
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
        const keys = JSON.stringify(
          events.map((event) => ({
            id: event.id,
            account_id: event.account_id,
            type: event.type,
            created_at: event.created_at,
            ordering_key: orderingKeyOf(event)
          }))
        )
        return Effect.andThen(
          writeBehind(
            sql,
            sql`INSERT INTO events ${sql.insert(rows)}`,
            new Signalling(
              sql`INSERT INTO webhook_deliveries
                (id, account_id, event_id, event_type, endpoint_id, status, next_attempt_at, created_at, updated_at, ordering_key)
              SELECT 'dlv_' || substr(ev.id, 5) || lpad((row_number() OVER (PARTITION BY ev.id ORDER BY e.id))::text, 3, '0'),
                     ev.account_id, ev.id, ev.type, e.id, 'pending', ev.created_at, ev.created_at, ev.created_at, ev.ordering_key
              FROM jsonb_to_recordset(${keys}::jsonb)
                   AS ev(id text, account_id uuid, type text, created_at timestamptz, ordering_key text)
              JOIN webhook_endpoints e ON e.account_id = ev.account_id AND e.deleted_at IS NULL AND e.enabled
                                       AND e.events ? ev.type
              RETURNING 1`,
              deliveriesCommitted
            )
          ),
          eventsCommitted
        )
      }
    })
  })
)

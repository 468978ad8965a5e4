import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { RetryPolicy } from "@leadline/core/webhooks/RetrySchedule"
import { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import { orDie } from "../internal/store.ts"
import { DELIVERIES_CHANNEL, Notifications } from "../Notifications.ts"

const at = (millis: number) => new Date(millis).toISOString()

/**
 * The worker's queue over `webhook_deliveries`. A claim takes due rows with
 * `FOR UPDATE SKIP LOCKED` and stamps a lease, so concurrent workers split the
 * work instead of sharing it; a result is recorded only by the lease holder.
 * Rows are found by their account and id (migration 0044): every key starts with the account.
 */
export const layer = Layer.effect(
  DeliveryQueue,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* Notifications
    return DeliveryQueue.of({
      claim: (worker, now, leaseMillis, limit) =>
        orDie(
          sql<{
            id: string
            event_id: string
            event_type: string
            round_attempts: number
            due_at: unknown
            body: string
            url: string
            secret: string
            previous_secret: string | null
            endpoint_id: string
            account_id: string
            retry_policy: RetryPolicy
          }>`
            WITH due AS (
              SELECT d.account_id, d.id, w.deleted_at IS NOT NULL AS gone
              FROM webhook_deliveries d JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.id = d.endpoint_id
              WHERE d.status = 'pending' AND d.next_attempt_at <= ${at(now)}::timestamptz
                AND (d.lease_until IS NULL OR d.lease_until <= ${at(now)}::timestamptz)
                -- One lead's events in order: not while an earlier one to the endpoint is pending.
                AND (d.ordering_key IS NULL OR NOT EXISTS (
                  SELECT 1 FROM webhook_deliveries earlier
                  WHERE earlier.account_id = d.account_id AND earlier.endpoint_id = d.endpoint_id
                    AND earlier.ordering_key = d.ordering_key
                    AND earlier.status = 'pending' AND earlier.id COLLATE "C" < d.id COLLATE "C"))
              ORDER BY d.next_attempt_at
              LIMIT ${limit}::int
              FOR UPDATE OF d SKIP LOCKED
            ), cancelled AS (
              -- Queued in a transaction that raced the endpoint's deletion: never sent.
              UPDATE webhook_deliveries d SET status = 'cancelled', next_attempt_at = NULL, updated_at = ${at(now)}::timestamptz
              FROM due WHERE d.account_id = due.account_id AND d.id = due.id AND due.gone
            ), claimed AS (
              UPDATE webhook_deliveries d
              SET lease_until = ${at(now + leaseMillis)}::timestamptz, lease_owner = ${worker}
              FROM due WHERE d.account_id = due.account_id AND d.id = due.id AND NOT due.gone
              RETURNING d.account_id, d.id, d.event_id, d.event_type, d.endpoint_id, d.round_attempts, d.next_attempt_at
            )
            SELECT c.id, c.event_id, c.event_type, c.round_attempts, c.next_attempt_at AS due_at, coalesce(e.body, e.payload::text) AS body,
                   w.url, w.secret, w.retry_policy, w.id AS endpoint_id, w.account_id,
                   CASE WHEN w.previous_secret_expires_at > ${at(now)}::timestamptz THEN w.previous_secret END AS previous_secret
            FROM claimed c JOIN events e ON e.account_id = c.account_id AND e.id = c.event_id
                 JOIN webhook_endpoints w ON w.account_id = c.account_id AND w.id = c.endpoint_id`
        ).pipe(
          // Hand-written, as in SqlLeads: the worker maps every claimed row, and a Schema decode costs several times more.
          Effect.map((rows) =>
            rows.map((row) => ({
              id: row.id,
              eventId: row.event_id,
              eventType: row.event_type,
              body: row.body,
              url: row.url,
              secret: row.secret,
              previousSecret: row.previous_secret,
              endpointId: row.endpoint_id,
              accountId: row.account_id,
              attempt: row.round_attempts + 1,
              dueAt: new Date(row.due_at as string).getTime(),
              retryPolicy: row.retry_policy
            }))
          )
        ),
      // One statement, so atomic without a transaction: the result is written only while
      // this worker still holds the lease (a stalled worker's late result is dropped). A retry of
      // an endpoint disabled meanwhile waits unscheduled, as its other pending deliveries do; the
      // endpoint's `failing_since` is written only when it changes (first failure, first success).
      record: (worker, attempt) => {
        const next = attempt.next
        const status = next._tag === "Delivered" ? "delivered" : next._tag === "Failed" ? "failed" : "pending"
        const nextAttemptAt = next._tag === "RetryAt" ? at(next.at) : null
        const succeeded = next._tag === "Delivered"
        return orDie(
          sql`
            WITH held AS (
              UPDATE webhook_deliveries d
              SET status = ${status}, round_attempts = d.round_attempts + 1,
                  next_attempt_at = CASE WHEN w.enabled THEN ${nextAttemptAt}::timestamptz END,
                  lease_until = NULL, lease_owner = NULL,
                  updated_at = ${at(attempt.attemptedAt + attempt.durationMs)}::timestamptz
              FROM webhook_endpoints w
              WHERE d.account_id = ${attempt.accountId}::uuid AND d.id = ${attempt.deliveryId}
                AND d.lease_owner = ${worker} AND d.status = 'pending'
                AND w.account_id = d.account_id AND w.id = d.endpoint_id
              RETURNING d.account_id, d.id, d.endpoint_id
            ), health AS (
              UPDATE webhook_endpoints w
              SET failing_since = CASE WHEN ${succeeded}::boolean THEN NULL ELSE ${at(attempt.attemptedAt)}::timestamptz END
              FROM held
              WHERE w.account_id = held.account_id AND w.id = held.endpoint_id
                AND CASE WHEN ${succeeded}::boolean THEN w.failing_since IS NOT NULL ELSE w.failing_since IS NULL END
            )
            INSERT INTO webhook_attempts (account_id, delivery_id, number, attempted_at, status_code, duration_ms, error)
            SELECT held.account_id, held.id,
                   (SELECT coalesce(max(number), 0) + 1 FROM webhook_attempts
                    WHERE account_id = held.account_id AND delivery_id = held.id),
                   ${at(attempt.attemptedAt)}::timestamptz, ${attempt.statusCode}::int, ${attempt.durationMs}::int,
                   ${attempt.error}
            FROM held`
        ).pipe(Effect.asVoid)
      },
      // The due partial index answers it (webhook_deliveries_due).
      backlog: (now) =>
        orDie(sql<{ due: number; oldest: unknown }>`
          SELECT count(*)::int AS due, min(next_attempt_at) AS oldest FROM webhook_deliveries
          WHERE status = 'pending' AND next_attempt_at <= ${new Date(now).toISOString()}::timestamptz`).pipe(
          Effect.map(([row]) => ({
            due: row?.due ?? 0,
            oldestDueAt:
              row?.oldest === null || row?.oldest === undefined ? undefined : new Date(row.oldest as string).getTime()
          }))
        ),
      nextDueAt: orDie(
        sql<{ next: unknown }>`SELECT min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at))) AS next
                               FROM webhook_deliveries WHERE status = 'pending'`
      ).pipe(
        Effect.map(([row]) =>
          row?.next === null || row?.next === undefined ? undefined : new Date(row.next as string).getTime()
        )
      ),
      wakeups: notifications.listen(DELIVERIES_CHANNEL)
    })
  })
)

import { Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { Attempt, Delivery, Endpoint } from "@leadline/core/webhooks/Webhook"
import { WebhooksRepo } from "@leadline/core/webhooks/WebhooksRepo"
import { isUuid, json, orDie, Timestamp } from "../internal/store.ts"
import { DELIVERIES_CHANNEL } from "../Notifications.ts"

// Rows described by Schema: the webhook routes are not benchmarked, so a decode that checks each row costs nothing that counts.
const EndpointRow = Schema.Struct({
  ...Endpoint.fields,
  accountId: Schema.String,
  secret: Schema.String,
  previousSecret: Schema.NullOr(Schema.String),
  previousSecretExpiresAt: Schema.NullOr(Timestamp),
  failingSince: Schema.NullOr(Timestamp),
  created_at: Timestamp
}).pipe(
  Schema.encodeKeys({
    accountId: "account_id",
    previousSecret: "previous_secret",
    previousSecretExpiresAt: "previous_secret_expires_at",
    failingSince: "failing_since"
  })
)

const { attempts: _attempts, ...deliveryFields } = Delivery.fields
const DeliveryRow = Schema.Struct({
  ...deliveryFields,
  next_attempt_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
})

const decodeEndpoints = Schema.decodeUnknownEffect(Schema.Array(EndpointRow))
const decodeDeliveries = Schema.decodeUnknownEffect(Schema.Array(DeliveryRow))
const decodeAttemptLists = Schema.decodeUnknownEffect(Schema.Array(Schema.Array(Attempt)))

export const layer = Layer.effect(
  WebhooksRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * Deliveries with their attempts in one statement: one snapshot sees a delivery's status and
     * its attempts together, where two reads could show a fourth attempt beside the status the
     * delivery had before it.
     */
    const selectDeliveries = (where: Statement.Fragment, tail: Statement.Fragment) =>
      sql`SELECT d.*, coalesce((
                SELECT jsonb_agg(jsonb_build_object(
                         'number', a.number,
                         'attempted_at', to_char(a.attempted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                         'status_code', a.status_code, 'duration_ms', a.duration_ms, 'error', a.error)
                       ORDER BY a.number)
                FROM webhook_attempts a WHERE a.account_id = d.account_id AND a.delivery_id = d.id), '[]'::jsonb) AS attempts
          FROM webhook_deliveries d WHERE ${where} ${tail}`.pipe(
        Effect.flatMap((rows) =>
          decodeDeliveries(rows).pipe(
            Effect.flatMap((deliveries) =>
              decodeAttemptLists(rows.map((row) => json(row.attempts))).pipe(
                Effect.map((attempts) =>
                  deliveries.map((delivery, i): Delivery => ({ ...delivery, attempts: attempts[i] ?? [] }))
                )
              )
            )
          )
        )
      )

    const findDelivery = (accountId: string, id: string) =>
      orDie(selectDeliveries(sql`d.account_id = ${accountId}::uuid AND d.id = ${id}`, sql``)).pipe(
        Effect.map(([delivery]) => delivery)
      )

    return WebhooksRepo.of({
      insertEndpoint: (endpoint) =>
        orDie(
          sql`INSERT INTO webhook_endpoints (id, account_id, url, events, description, secret, enabled, retry_policy, created_at)
              VALUES (${endpoint.id}::uuid, ${endpoint.accountId}::uuid, ${endpoint.url}, ${JSON.stringify(endpoint.events)}::jsonb,
                      ${endpoint.description}, ${endpoint.secret}, ${endpoint.enabled}, ${endpoint.retry_policy},
                      ${endpoint.created_at}::timestamptz)`
        ).pipe(Effect.asVoid),
      listEndpoints: (accountId, page) =>
        orDie(
          Effect.all([
            sql`SELECT * FROM webhook_endpoints WHERE account_id = ${accountId}::uuid AND deleted_at IS NULL
                             ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`.pipe(
              Effect.flatMap(decodeEndpoints)
            ),
            sql<{ total: number }>`SELECT count(*)::int AS total FROM webhook_endpoints
                                   WHERE account_id = ${accountId}::uuid AND deleted_at IS NULL`
          ])
        ).pipe(Effect.map(([items, [count]]) => ({ items, total: count?.total ?? 0 }))),
      findEndpoint: (accountId, id) =>
        isUuid(id)
          ? orDie(
              sql`SELECT * FROM webhook_endpoints
                  WHERE account_id = ${accountId}::uuid AND id = ${id}::uuid AND deleted_at IS NULL`.pipe(
                Effect.flatMap(decodeEndpoints)
              )
            ).pipe(Effect.map(([endpoint]) => endpoint))
          : Effect.succeed(undefined),
      // Disabling pauses the pending deliveries (no next attempt); enabling makes what waited due at once.
      updateEndpoint: (endpoint, at) =>
        orDie(
          sql.withTransaction(
            Effect.gen(function* () {
              const [before] = yield* sql<{ enabled: boolean }>`SELECT enabled FROM webhook_endpoints
                WHERE account_id = ${endpoint.accountId}::uuid AND id = ${endpoint.id}::uuid AND deleted_at IS NULL
                FOR UPDATE`
              if (before === undefined) return undefined
              const enabling = !before.enabled && endpoint.enabled
              const [row] = yield* sql`UPDATE webhook_endpoints SET url = ${endpoint.url},
                  events = ${JSON.stringify(endpoint.events)}::jsonb, description = ${endpoint.description},
                  enabled = ${endpoint.enabled}, retry_policy = ${endpoint.retry_policy},
                  secret = ${endpoint.secret}, previous_secret = ${endpoint.previousSecret},
                  previous_secret_expires_at = ${endpoint.previousSecretExpiresAt}::timestamptz,
                  failing_since = CASE WHEN ${enabling}::boolean THEN NULL ELSE failing_since END
                WHERE account_id = ${endpoint.accountId}::uuid AND id = ${endpoint.id}::uuid
                RETURNING *`.pipe(Effect.flatMap(decodeEndpoints))
              if (before.enabled && !endpoint.enabled) {
                yield* sql`UPDATE webhook_deliveries SET next_attempt_at = NULL, updated_at = ${at}::timestamptz
                  WHERE account_id = ${endpoint.accountId}::uuid AND endpoint_id = ${endpoint.id}::uuid
                    AND status = 'pending'`
              } else if (enabling) {
                yield* sql`UPDATE webhook_deliveries SET next_attempt_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
                  WHERE account_id = ${endpoint.accountId}::uuid AND endpoint_id = ${endpoint.id}::uuid
                    AND status = 'pending' AND next_attempt_at IS NULL`
              }
              return row
            })
          )
        ),
      deleteEndpoint: (accountId, id, at) =>
        isUuid(id)
          ? orDie(
              sql.withTransaction(
                Effect.gen(function* () {
                  const deleted = yield* sql`UPDATE webhook_endpoints SET deleted_at = ${at}::timestamptz
                    WHERE account_id = ${accountId}::uuid AND id = ${id}::uuid AND deleted_at IS NULL RETURNING id`
                  if (deleted.length === 0) return false
                  yield* sql`UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL,
                               updated_at = ${at}::timestamptz
                             WHERE account_id = ${accountId}::uuid AND endpoint_id = ${id}::uuid AND status = 'pending'`
                  return true
                })
              )
            )
          : Effect.succeed(false),
      listDeliveries: (accountId, filter, page) => {
        const endpoint =
          filter.endpointId === undefined
            ? sql``
            : isUuid(filter.endpointId)
              ? sql`AND endpoint_id = ${filter.endpointId}::uuid`
              : sql`AND false`
        const status = filter.status === undefined ? sql`` : sql`AND status = ${filter.status}`
        return orDie(
          Effect.all([
            selectDeliveries(
              sql`d.account_id = ${accountId}::uuid ${endpoint} ${status}`,
              sql`ORDER BY d.created_at DESC, d.id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`
            ),
            sql<{ total: number }>`SELECT count(*)::int AS total FROM webhook_deliveries
                                   WHERE account_id = ${accountId}::uuid ${endpoint} ${status}`
          ])
        ).pipe(Effect.map(([items, [count]]) => ({ items, total: count?.total ?? 0 })))
      },
      findDelivery,
      // Oldest first: the requeued rounds are due at once, and the claim takes a lead's in order.
      recover: (accountId, endpointId, since, at) =>
        isUuid(endpointId)
          ? orDie(
              sql<{ requeued: number | null; found: boolean }>`
                WITH endpoint AS (
                  SELECT account_id, id, enabled FROM webhook_endpoints
                  WHERE account_id = ${accountId}::uuid AND id = ${endpointId}::uuid AND deleted_at IS NULL
                  FOR SHARE
                ), requeued AS (
                  UPDATE webhook_deliveries d
                  SET status = 'pending', round_attempts = 0, lease_until = NULL, lease_owner = NULL,
                      next_attempt_at = CASE WHEN endpoint.enabled THEN ${at}::timestamptz END, updated_at = ${at}::timestamptz
                  FROM endpoint
                  WHERE d.account_id = endpoint.account_id AND d.endpoint_id = endpoint.id AND d.status = 'failed'
                    AND d.created_at >= ${since}::timestamptz
                  RETURNING d.id, pg_notify(${DELIVERIES_CHANNEL}, '')
                )
                SELECT (SELECT count(*)::int FROM requeued) AS requeued, EXISTS (SELECT 1 FROM endpoint) AS found`
            ).pipe(Effect.map(([row]) => (row?.found ? (row.requeued ?? 0) : undefined)))
          : Effect.succeed(undefined),
      // One statement: the foreign keys are checked at its end, when all three are gone. A range of
      // every account's events by id (ULIDs sort by time), on `events_by_id` (migration 0044).
      purgeEventsBefore: (before, limit) =>
        orDie(
          sql<{ purged: number }>`
            WITH old AS (
              SELECT e.account_id, e.id FROM events e
              WHERE e.id < ${before}
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                                WHERE d.account_id = e.account_id AND d.event_id = e.id AND d.status = 'pending')
              ORDER BY e.id LIMIT ${limit}::int
            ), attempts AS (
              DELETE FROM webhook_attempts a USING webhook_deliveries d, old
              WHERE d.account_id = old.account_id AND d.event_id = old.id
                AND a.account_id = d.account_id AND a.delivery_id = d.id
            ), deliveries AS (
              DELETE FROM webhook_deliveries d USING old WHERE d.account_id = old.account_id AND d.event_id = old.id
            ), purged AS (
              DELETE FROM events e USING old WHERE e.account_id = old.account_id AND e.id = old.id RETURNING 1
            )
            SELECT count(*)::int AS purged FROM purged`
        ).pipe(Effect.map(([row]) => row?.purged ?? 0)),
      // One statement (no transaction of its own): it runs inside the caller's unit of work, with its event.
      disableFailing: (accountId, endpointId, failingBefore, at) =>
        orDie(
          sql`WITH disabled AS (
                UPDATE webhook_endpoints SET enabled = false
                WHERE account_id = ${accountId}::uuid AND id = ${endpointId}::uuid AND enabled AND deleted_at IS NULL
                  AND failing_since <= ${failingBefore}::timestamptz
                RETURNING *
              ), paused AS (
                UPDATE webhook_deliveries d SET next_attempt_at = NULL, updated_at = ${at}::timestamptz
                FROM disabled
                WHERE d.account_id = disabled.account_id AND d.endpoint_id = disabled.id AND d.status = 'pending'
              )
              SELECT * FROM disabled`.pipe(Effect.flatMap(decodeEndpoints))
        ).pipe(Effect.map(([endpoint]) => endpoint)),
      // One statement that share-locks the endpoint row: a concurrent delete either commits
      // first (and this sees the endpoint deleted) or waits for this one and then cancels the
      // delivery it queued. A separate check before the UPDATE could requeue for a deleted endpoint.
      redeliver: (accountId, id, at) =>
        Effect.gen(function* () {
          const [row] = yield* orDie(
            sql<{ gone: boolean }>`
              WITH target AS (
                SELECT d.account_id, d.id, w.deleted_at IS NOT NULL AS gone
                FROM webhook_deliveries d JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.id = d.endpoint_id
                WHERE d.account_id = ${accountId}::uuid AND d.id = ${id}
                FOR SHARE OF w
              ), requeued AS (
                UPDATE webhook_deliveries d
                SET status = 'pending', round_attempts = 0, next_attempt_at = ${at}::timestamptz,
                    lease_until = NULL, lease_owner = NULL, updated_at = ${at}::timestamptz
                FROM target
                WHERE d.account_id = target.account_id AND d.id = target.id AND NOT target.gone AND d.status <> 'pending'
                RETURNING d.id
              )
              -- The notification (sent at commit) wakes the workers only when something was requeued.
              SELECT target.gone, (SELECT count(pg_notify(${DELIVERIES_CHANNEL}, '')) FROM requeued) AS notified
              FROM target`
          )
          if (row === undefined) return undefined
          if (row.gone) return "gone" as const
          return yield* findDelivery(accountId, id)
          // One transaction: the NOTIFY goes at its commit, after the delivery is read back as requeued,
          // so a worker woken by it cannot have delivered it before the answer is read.
        }).pipe(sql.withTransaction, orDie)
    })
  })
)

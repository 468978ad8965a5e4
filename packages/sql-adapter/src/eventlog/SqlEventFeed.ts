import { Clock, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { Envelope } from "@leadline/core/events/Event"
import { EventFeed, type Position, type Positioned } from "@leadline/core/eventlog/EventFeed"
import * as Ids from "@leadline/core/Ids"
import { json, orDie, textArray } from "../internal/store.ts"
import { EVENTS_CHANNEL, Notifications } from "../Notifications.ts"

/**
 * The outbox's table (`events`) in commit order, with no column of its own: an event's place is
 * the transaction that wrote it (the row's `xmin`), then its id. Only what transactions older than
 * the oldest one still running wrote is read (the horizon, from the reader's own snapshot): a
 * transaction that commits later has a younger xid than that, so a reader that has passed a place
 * never misses a late commit. A transaction of another database on the same server cannot write
 * here, so it does not hold the horizon back (when `pg_stat_activity` shows whose it is). xids
 * are compared by `age()` (their distance back from now), so their wrapping at 2^32 does not
 * matter within the log's 30 days.
 *
 * Every scan is bounded below by the id's time (`events_by_id` across accounts, the primary key
 * `(account_id, id)` within one; migration 0044): an event whose transaction commits more than
 * `COMMIT_SLACK_MILLIS` after its id was made is still in the log (`GET /api/v1/events`) but a
 * stream may not carry it.
 */
const COMMIT_SLACK_MILLIS = 60_000

/** A place is `xid/id`; the horizon itself is `xid/` (before every event of that transaction). */
const parse = (position: Position) => {
  const slash = position.indexOf("/")
  return { xid: position.slice(0, slash), id: position.slice(slash + 1) }
}

interface Row {
  readonly payload: unknown
  readonly xid: string
  readonly id: string
}

const positioned = (row: Row): Positioned => ({
  position: `${row.xid}/${row.id}`,
  event: json<Envelope>(row.payload)
})

export const layer = Layer.effect(
  EventFeed,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* Notifications

    const after = (position: Position) => {
      const { xid, id } = parse(position)
      return sql`(age(xmin) < age(${xid}::xid) OR (xmin = ${xid}::xid AND id > ${id}))`
    }
    const atOrBefore = (position: Position) => {
      const { xid, id } = parse(position)
      return sql`(age(xmin) > age(${xid}::xid) OR (xmin = ${xid}::xid AND id <= ${id}))`
    }

    /**
     * The oldest xid in progress in this statement's snapshot, else the next one to be given out;
     * skipping those pg_stat_activity shows in another database (one it no longer shows is kept:
     * it may have been ours, and had not committed when the snapshot was taken).
     */
    const horizonXid = sql`(WITH s AS (SELECT pg_current_snapshot() AS snap)
      SELECT COALESCE(
        (SELECT x FROM s, pg_snapshot_xip(s.snap) AS x
          WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                            WHERE a.backend_xid = x::xid AND a.datname <> current_database())
          ORDER BY x LIMIT 1),
        (SELECT pg_snapshot_xmax(snap) FROM s))::xid)`

    return EventFeed.of({
      head: orDie(sql<{ horizon: string }>`SELECT ${horizonXid}::text AS horizon`).pipe(
        Effect.map(([row]) => `${row!.horizon}/`)
      ),
      next: (position, limit) =>
        Effect.gen(function* () {
          const floor = Ids.floorAt("evt", (yield* Clock.currentTimeMillis) - COMMIT_SLACK_MILLIS)
          const rows = yield* orDie(
            sql<{ horizon: string; pending: boolean } & { [K in keyof Row]: Row[K] | null }>`
              WITH h AS (SELECT ${horizonXid} AS x)
              SELECT h.x::text AS horizon, e.payload, e.xid, e.id,
                     EXISTS (SELECT 1 FROM events p WHERE p.id > ${floor} AND age(p.xmin) <= age(h.x)) AS pending
              FROM h LEFT JOIN LATERAL (
                SELECT payload, xmin::text AS xid, id FROM events
                WHERE id > ${floor} AND age(xmin) > age(h.x) AND ${after(position)}
                ORDER BY age(xmin) DESC, id LIMIT ${limit}::int
              ) e ON true`
          )
          const items = rows.filter((row) => row.id !== null).map((row) => positioned(row as Row))
          const horizon = rows[0]!.horizon
          return {
            items,
            // A short page read everything below the horizon: the next read may start there.
            reached: items.length < limit ? `${horizon}/` : items[items.length - 1]!.position,
            pending: rows[0]!.pending
          }
        }),
      between: (accountId, types, from, upTo, limit) => {
        const floor = Ids.floorAt("evt", Ids.timeOf(parse(from).id) - COMMIT_SLACK_MILLIS)
        return orDie(
          sql<Row>`SELECT payload, xmin::text AS xid, id FROM events
            WHERE account_id = ${accountId}::uuid AND type = ANY(${textArray(types)}::text[]) AND id > ${floor}
              AND ${after(from)} AND ${atOrBefore(upTo)}
            ORDER BY age(xmin) DESC, id LIMIT ${limit}::int`
        ).pipe(Effect.map((rows) => rows.map(positioned)))
      },
      positionOf: (accountId, eventId) =>
        orDie(
          sql<{
            xid: string
          }>`SELECT xmin::text AS xid FROM events WHERE account_id = ${accountId}::uuid AND id = ${eventId}`
        ).pipe(Effect.map(([row]) => (row === undefined ? undefined : `${row.xid}/${eventId}`))),
      wakeups: notifications.listen(EVENTS_CHANNEL)
    })
  })
)

import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { Envelope } from "@leadline/core/events/Event"
import { EventLog } from "@leadline/core/eventlog/EventLog"
import { json, orDie, textArray } from "../internal/store.ts"

/**
 * The account's events from the outbox's own table (`events`), newest first by id on its primary
 * key, `(account_id, id)` (migration 0044); `Events.pageOf` says the same for memory.
 */
export const layer = Layer.effect(
  EventLog,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return EventLog.of({
      list: (accountId, query) => {
        const window = query.window
        // A page of newer events walks up from the cursor, then is put back newest first.
        const ascending = window.by === "before"
        const where = sql.and([
          sql`account_id = ${accountId}::uuid`,
          sql`type = ANY(${textArray(query.types)}::text[])`,
          sql`created_at >= ${query.since}::timestamptz`,
          ...(query.createdAfter === undefined ? [] : [sql`created_at >= ${query.createdAfter}::timestamptz`]),
          ...(query.createdBefore === undefined ? [] : [sql`created_at < ${query.createdBefore}::timestamptz`]),
          ...(window.by === "after" ? [sql`id < ${window.id}`] : []),
          ...(window.by === "before" ? [sql`id > ${window.id}`] : [])
        ])
        return orDie(
          sql<{ payload: unknown }>`SELECT payload FROM events WHERE ${where}
            ORDER BY id ${sql.unsafe(ascending ? "ASC" : "DESC")} LIMIT ${query.limit + 1}::int`
        ).pipe(
          Effect.map((rows) => {
            const page = rows.slice(0, query.limit).map((row) => json<Envelope>(row.payload))
            return { items: ascending ? page.reverse() : page, hasMore: rows.length > query.limit }
          })
        )
      },
      find: (accountId, id) =>
        orDie(
          sql<{ payload: unknown }>`SELECT payload FROM events WHERE account_id = ${accountId}::uuid AND id = ${id}`
        ).pipe(Effect.map(([row]) => (row === undefined ? undefined : json<Envelope>(row.payload))))
    })
  })
)

import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { type Conversation, windowExpiry } from "@leadline/core/conversations/Conversation"
import { ConversationsRepo } from "@leadline/core/conversations/ConversationsRepo"
import { iso, isoOrNull, isUuid, json, orDie, textArray } from "../internal/store.ts"
import * as Tallies from "../internal/tallies.ts"

/**
 * A row as the domain's conversation, mapped by hand (as leads and messages are): the columns'
 * types hold what a Schema decode would check, and a campaign reads back thousands at once.
 */
const toConversation = (row: Record<string, unknown>): Conversation => {
  const lastInboundAt = isoOrNull(row.last_inbound_at)
  return {
    id: row.id as string,
    lead_id: row.lead_id as string,
    channel_id: row.channel_id as string,
    status: row.status as Conversation["status"],
    assigned_user_id: (row.assigned_user_id as string | null) ?? null,
    snoozed_until: isoOrNull(row.snoozed_until),
    contact_wa_id: (row.contact_wa_id as string | null) ?? null,
    last_message_at: isoOrNull(row.last_message_at),
    last_inbound_at: lastInboundAt,
    service_window_expires_at: windowExpiry(lastInboundAt),
    handoff: row.handoff === null || row.handoff === undefined ? null : json<Conversation["handoff"]>(row.handoff),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at)
  }
}

const COLUMNS = `id, lead_id, channel_id, status, assigned_user_id::text AS assigned_user_id, snoozed_until,
  contact_wa_id, last_message_at, last_inbound_at, handoff, created_at, updated_at`

export const layer = Layer.effect(
  ConversationsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const read = (statement: Effect.Effect<ReadonlyArray<Record<string, unknown>>, any>) =>
      orDie(Effect.map(statement, (rows) => rows.map(toConversation))) as Effect.Effect<ReadonlyArray<Conversation>>

    return ConversationsRepo.of({
      createdPerBucket: (accountId, bounds) => Tallies.perBucket(sql, accountId, "conversations_started", bounds),
      list: (accountId, filters, page) => {
        const assignee = filters.assigned_user_id
        // An id that is not a uuid names no user: nothing matches, and PostgreSQL would refuse the cast.
        if (assignee !== undefined && assignee !== "none" && !isUuid(assignee)) {
          return Effect.succeed({ items: [], total: 0 })
        }
        const where = sql.and([
          sql`account_id = ${accountId}::uuid`,
          ...(filters.status === undefined ? [] : [sql`status = ${filters.status}`]),
          ...(assignee === undefined
            ? []
            : [assignee === "none" ? sql`assigned_user_id IS NULL` : sql`assigned_user_id = ${assignee}::uuid`]),
          ...(filters.lead_id === undefined ? [] : [sql`lead_id = ${filters.lead_id}`]),
          ...(filters.channel_id === undefined ? [] : [sql`channel_id = ${filters.channel_id}`])
        ])
        return Effect.all([
          read(sql`SELECT ${columns} FROM conversations WHERE ${where}
                   ORDER BY coalesce(last_message_at, created_at) DESC, id DESC
                   LIMIT ${page.limit}::int OFFSET ${page.offset}::int`),
          orDie(sql<{ total: number }>`SELECT count(*)::int AS total FROM conversations WHERE ${where}`)
        ]).pipe(Effect.map(([items, [count]]) => ({ items, total: count?.total ?? 0 })))
      },
      find: (accountId, id) =>
        read(sql`SELECT ${columns} FROM conversations WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(
          Effect.map(([row]) => row)
        ),
      update: (accountId, c) =>
        read(sql`UPDATE conversations SET status = ${c.status}, snoozed_until = ${c.snoozed_until}::timestamptz,
                   assigned_user_id = ${c.assigned_user_id}::uuid,
                   handoff = ${c.handoff === null ? null : JSON.stringify(c.handoff)}::jsonb,
                   updated_at = ${c.updated_at}::timestamptz
                 WHERE account_id = ${accountId}::uuid AND id = ${c.id}
                 RETURNING ${columns}`).pipe(Effect.map(([row]) => row)),
      findOrCreate: (accountId, wanted) =>
        Effect.gen(function* () {
          const pairs = JSON.stringify(wanted.map((c) => ({ channel_id: c.channel_id, lead_id: c.lead_id })))
          // One index probe per key (LATERAL … LIMIT 1): as a join, the planner hashed the account's
          // every conversation for ten keys.
          const existing = () =>
            read(sql`SELECT c.* FROM jsonb_to_recordset(${pairs}::jsonb) AS w(channel_id text, lead_id text)
                     CROSS JOIN LATERAL (SELECT ${columns} FROM conversations
                       WHERE account_id = ${accountId}::uuid AND channel_id = w.channel_id AND lead_id = w.lead_id
                       LIMIT 1) AS c`)
          const threadKey = (c: { channel_id: string; lead_id: string }) => `${c.channel_id} ${c.lead_id}`
          const found = new Map((yield* existing()).map((c) => [threadKey(c), c]))
          const missing = wanted.filter((c) => !found.has(threadKey(c)))
          if (missing.length > 0) {
            // DO NOTHING and a read, not a no-op DO UPDATE: that would lock the rows for the rest of
            // the transaction, ahead of the usage counters, and invite a deadlock with their slow path.
            const made = yield* read(sql`
              INSERT INTO conversations (account_id, id, lead_id, channel_id, status, assigned_user_id, snoozed_until,
                contact_wa_id, last_message_at, last_inbound_at, created_at, updated_at)
              SELECT ${accountId}::uuid, f.id, f.lead_id, f.channel_id, f.status, NULL, NULL, f.contact_wa_id, NULL, NULL,
                f.created_at, f.updated_at
              FROM jsonb_to_recordset(${JSON.stringify(missing)}::jsonb) AS f(id text, lead_id text, channel_id text,
                status text, contact_wa_id text, created_at timestamptz, updated_at timestamptz)
              ON CONFLICT (account_id, channel_id, lead_id) DO NOTHING
              RETURNING ${columns}`)
            for (const c of made) found.set(threadKey(c), c)
            // Another request made the rest meanwhile.
            if (made.length < missing.length) for (const c of yield* existing()) found.set(threadKey(c), c)
          }
          return wanted.map((c) => found.get(threadKey(c))!)
        }),
      // The snooze each had is read under the row lock, so the event can say what it was.
      wakeSnoozed: (now) =>
        orDie(sql<Record<string, unknown>>`
          WITH due AS (
            SELECT account_id, id, snoozed_until AS was_until FROM conversations
            WHERE status = 'snoozed' AND snoozed_until <= ${now}::timestamptz
            ORDER BY account_id, id FOR UPDATE)
          UPDATE conversations c SET status = 'open', snoozed_until = NULL, updated_at = ${now}::timestamptz
          FROM due WHERE c.account_id = due.account_id AND c.id = due.id
          RETURNING c.account_id::text AS account_id, due.was_until, ${sql.unsafe(
            COLUMNS.split(",")
              .map((column) => `c.${column.trim()}`)
              .join(", ")
          )}`).pipe(
          Effect.map((rows) =>
            rows.map((row) => ({
              accountId: row.account_id as string,
              conversation: toConversation(row),
              snoozedUntil: iso(row.was_until)
            }))
          )
        ),
      removeForLead: (accountId, leadId) =>
        orDie(sql`DELETE FROM conversations WHERE account_id = ${accountId}::uuid AND lead_id = ${leadId}`).pipe(
          Effect.asVoid
        ),
      // In id order, so two batches lock their threads in one order.
      recordInbound: (accountId, moved) =>
        orDie(sql`
          UPDATE conversations c SET
            contact_wa_id = i.wa_id,
            last_inbound_at = greatest(c.last_inbound_at, i.at),
            last_message_at = greatest(c.last_message_at, i.now),
            status = 'open', snoozed_until = NULL, updated_at = i.now
          FROM (SELECT * FROM jsonb_to_recordset(${JSON.stringify(moved.map(({ id, at, waId, now }) => ({ id, at, wa_id: waId, now })))}::jsonb)
                  AS r(id text, at timestamptz, wa_id text, now timestamptz) ORDER BY id) AS i
          WHERE c.account_id = ${accountId}::uuid AND c.id = ANY(${textArray(moved.map((m) => m.id))}::text[])
            AND c.id = i.id`).pipe(Effect.asVoid),
      recordOutbound: (accountId, ids, now) =>
        orDie(sql`
          UPDATE conversations SET last_message_at = greatest(last_message_at, ${now}::timestamptz),
            updated_at = ${now}::timestamptz
          WHERE account_id = ${accountId}::uuid AND id = ANY(${textArray(ids)}::text[])`).pipe(Effect.asVoid),
      learnWaIds: (accountId, learned) =>
        orDie(sql`UPDATE conversations c SET contact_wa_id = l.wa_id
                  FROM jsonb_to_recordset(${JSON.stringify(learned.map(({ id, waId }) => ({ id, wa_id: waId })))}::jsonb)
                    AS l(id text, wa_id text)
                  WHERE c.account_id = ${accountId}::uuid AND c.id = ANY(${textArray(learned.map((l) => l.id))}::text[])
                    AND c.id = l.id AND c.contact_wa_id IS NULL`).pipe(Effect.asVoid),
      leadsByWaId: (accountId, channelId, waIds) =>
        orDie(sql<{ contact_wa_id: string; lead_id: string }>`
          SELECT w.contact_wa_id, c.lead_id FROM jsonb_array_elements_text(${JSON.stringify(waIds)}::jsonb) AS w(contact_wa_id)
          CROSS JOIN LATERAL (SELECT lead_id FROM conversations
            WHERE account_id = ${accountId}::uuid AND channel_id = ${channelId} AND contact_wa_id = w.contact_wa_id
            ORDER BY created_at LIMIT 1) AS c`).pipe(
          Effect.map((rows) => new Map(rows.map((row) => [row.contact_wa_id, row.lead_id])))
        )
    })
  })
)

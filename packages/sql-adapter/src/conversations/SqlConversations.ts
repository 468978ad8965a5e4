import { Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Conversation, windowExpiry } from "@leadline/core/conversations/Conversation"
import { ConversationsRepo } from "@leadline/core/conversations/ConversationsRepo"
import { isUuid, orDie, Timestamp } from "../internal/store.ts"

const { service_window_expires_at: _window, ...stored } = Conversation.fields
const Row = Schema.Struct({
  ...stored,
  snoozed_until: Schema.NullOr(Timestamp),
  last_message_at: Schema.NullOr(Timestamp),
  last_inbound_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))
const toConversation = (row: typeof Row.Type): Conversation => ({
  ...row,
  service_window_expires_at: windowExpiry(row.last_inbound_at)
})

const COLUMNS = `id, lead_id, channel_id, status, assigned_user_id::text AS assigned_user_id, snoozed_until,
  contact_wa_id, last_message_at, last_inbound_at, created_at, updated_at`

export const layer = Layer.effect(
  ConversationsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const read = (statement: Effect.Effect<ReadonlyArray<unknown>, any>) =>
      orDie(Effect.flatMap(statement, decodeRows)).pipe(Effect.map((rows) => rows.map(toConversation)))

    return ConversationsRepo.of({
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
                   assigned_user_id = ${c.assigned_user_id}::uuid, updated_at = ${c.updated_at}::timestamptz
                 WHERE account_id = ${accountId}::uuid AND id = ${c.id}
                 RETURNING ${columns}`).pipe(Effect.map(([row]) => row)),
      findOrCreate: (accountId, fresh) =>
        Effect.gen(function* () {
          // DO NOTHING and a read, not a no-op DO UPDATE: that would lock the row for the rest of
          // the transaction, ahead of the usage counters, and invite a deadlock with their slow path.
          const [made] = yield* read(sql`
            INSERT INTO conversations (account_id, id, lead_id, channel_id, status, assigned_user_id, snoozed_until,
              contact_wa_id, last_message_at, last_inbound_at, created_at, updated_at)
            VALUES (${accountId}::uuid, ${fresh.id}, ${fresh.lead_id}, ${fresh.channel_id}, ${fresh.status}, NULL, NULL,
              ${fresh.contact_wa_id}, NULL, NULL, ${fresh.created_at}::timestamptz, ${fresh.updated_at}::timestamptz)
            ON CONFLICT (account_id, channel_id, lead_id) DO NOTHING
            RETURNING ${columns}`)
          if (made !== undefined) return made
          const [found] = yield* read(sql`SELECT ${columns} FROM conversations
            WHERE account_id = ${accountId}::uuid AND channel_id = ${fresh.channel_id} AND lead_id = ${fresh.lead_id}`)
          return found!
        }),
      wakeSnoozed: (now) =>
        orDie(sql<{ n: number }>`
          WITH woken AS (
            UPDATE conversations SET status = 'open', snoozed_until = NULL, updated_at = ${now}::timestamptz
            WHERE status = 'snoozed' AND snoozed_until <= ${now}::timestamptz RETURNING 1)
          SELECT count(*)::int AS n FROM woken`).pipe(Effect.map(([row]) => row?.n ?? 0)),
      removeForLead: (accountId, leadId) =>
        orDie(sql`DELETE FROM conversations WHERE account_id = ${accountId}::uuid AND lead_id = ${leadId}`).pipe(
          Effect.asVoid
        ),
      recordInbound: (accountId, id, inbound) =>
        orDie(sql`
          UPDATE conversations SET
            contact_wa_id = ${inbound.waId},
            last_inbound_at = greatest(last_inbound_at, ${inbound.at}::timestamptz),
            last_message_at = greatest(last_message_at, ${inbound.now}::timestamptz),
            status = 'open', snoozed_until = NULL, updated_at = ${inbound.now}::timestamptz
          WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(Effect.asVoid),
      recordOutbound: (accountId, id, now) =>
        orDie(sql`
          UPDATE conversations SET last_message_at = greatest(last_message_at, ${now}::timestamptz),
            updated_at = ${now}::timestamptz
          WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(Effect.asVoid),
      learnWaId: (accountId, id, waId) =>
        orDie(sql`UPDATE conversations SET contact_wa_id = ${waId}
                  WHERE account_id = ${accountId}::uuid AND id = ${id} AND contact_wa_id IS NULL`).pipe(Effect.asVoid),
      leadByWaId: (accountId, channelId, waId) =>
        orDie(sql<{ lead_id: string }>`
          SELECT lead_id FROM conversations
          WHERE account_id = ${accountId}::uuid AND channel_id = ${channelId} AND contact_wa_id = ${waId}
          LIMIT 1`).pipe(Effect.map(([row]) => row?.lead_id))
    })
  })
)

import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import type { Message } from "@leadline/core/messages/Message"
import { MessagesRepo } from "@leadline/core/messages/MessagesRepo"
import type { OutboundStatus } from "@leadline/core/messages/StatusMerge"
import * as Tallies from "../internal/tallies.ts"
import { iso, isoOrNull, json, orDie, textArray } from "../internal/store.ts"
import { MESSAGES_CHANNEL, Notifications } from "../Notifications.ts"
import { afterCommitIfWrote } from "../UnitOfWork.ts"

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))
const parsed = <A>(value: unknown): A | null => (value === null || value === undefined ? null : json<A>(value))

/**
 * A row as the domain's message, mapped by hand (as leads are): the columns' types and CHECKs
 * already hold what a Schema decode would check, at a tenth of its cost on the sender's path.
 */
export const toMessage = (row: Record<string, unknown>): Message => ({
  id: row.id as string,
  conversation_id: row.conversation_id as string,
  lead_id: row.lead_id as string,
  channel_id: row.channel_id as string,
  direction: row.direction as Message["direction"],
  type: row.type as string,
  text: text(row.text),
  template: parsed(row.template),
  interactive: parsed(row.interactive),
  reply_to: parsed(row.reply_to),
  media: parsed(row.media),
  status: row.status as Message["status"],
  error: parsed(row.error),
  external_id: text(row.external_id),
  sender_type: row.sender_type as Message["sender_type"],
  sender_id: text(row.sender_id),
  campaign_id: text(row.campaign_id),
  scheduled_at: isoOrNull(row.scheduled_at),
  provider_timestamp: isoOrNull(row.provider_timestamp),
  provider_payload: parsed(row.provider_payload),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  sent_at: isoOrNull(row.sent_at),
  delivered_at: isoOrNull(row.delivered_at),
  read_at: isoOrNull(row.read_at),
  failed_at: isoOrNull(row.failed_at)
})

// jsonb columns are read as text: the drivers differ in whether they parse jsonb.
const AS_TEXT = new Set(["template", "interactive", "reply_to", "media", "error"])
const NAMES = [
  "id",
  "conversation_id",
  "lead_id",
  "channel_id",
  "direction",
  "type",
  "text",
  "template",
  "interactive",
  "reply_to",
  "media",
  "status",
  "error",
  "external_id",
  "sender_type",
  "sender_id",
  "campaign_id",
  "scheduled_at",
  "provider_timestamp",
  "provider_payload",
  "created_at",
  "updated_at",
  "sent_at",
  "delivered_at",
  "read_at",
  "failed_at"
]

/** The columns a message row is read from, of the table or of `alias`. */
export const columnsOf = (alias?: string) =>
  NAMES.map((name) => {
    const column = alias === undefined ? name : `${alias}.${name}`
    return AS_TEXT.has(name) ? `${column}::text AS ${name}` : column
  }).join(", ")

const COLUMNS = columnsOf()

/**
 * Inserts queued outbound messages from `rows`, a relation `m` with the message's columns: the one
 * place that gives a message its sender's lane (campaign messages 1, behind replies, §7.1) and
 * when it is due. Returns the ids inserted.
 */
export const insertQueued = (sql: SqlClient.SqlClient, accountId: string, rows: Fragment) => sql`
  INSERT INTO messages (account_id, id, conversation_id, lead_id, channel_id, direction, type, text, template,
    interactive, reply_to, media, status, sender_type, sender_id, campaign_id, scheduled_at, created_at, updated_at,
    priority, not_before)
  SELECT ${accountId}::uuid, m.id, m.conversation_id, m.lead_id, m.channel_id, m.direction, m.type, m.text,
    m.template, m.interactive, m.reply_to, m.media, m.status, m.sender_type, m.sender_id, m.campaign_id, m.scheduled_at, m.created_at, m.updated_at,
    CASE WHEN m.campaign_id IS NULL THEN 0 ELSE 1 END, coalesce(m.scheduled_at, m.created_at)
  FROM ${rows}
  RETURNING id`

const jsonOrNull = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value))

export const layer = Layer.effect(
  MessagesRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const messagesQueued = (yield* Notifications).announce(MESSAGES_CHANNEL)
    const columns = sql.unsafe(COLUMNS)
    const read = (statement: Effect.Effect<ReadonlyArray<Record<string, unknown>>, any>) =>
      orDie(Effect.map(statement, (rows) => rows.map(toMessage))) as Effect.Effect<ReadonlyArray<Message>>

    return MessagesRepo.of({
      createdPerBucket: (accountId, kind, bounds) => Tallies.perBucket(sql, accountId, `messages_${kind}`, bounds),
      list: (accountId, conversationId, page, before) => {
        const where = sql.and([
          sql`account_id = ${accountId}::uuid`,
          sql`conversation_id = ${conversationId}`,
          ...(before === undefined ? [] : [sql`(created_at, id) < (${before.created_at}::timestamptz, ${before.id})`])
        ])
        return Effect.all([
          read(sql`SELECT ${columns} FROM messages WHERE ${where}
                   ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`),
          orDie(sql<{ total: number }>`SELECT count(*)::int AS total FROM messages WHERE ${where}`)
        ]).pipe(Effect.map(([items, [count]]) => ({ items, total: count?.total ?? 0 })))
      },
      find: (accountId, id) =>
        read(sql`SELECT ${columns} FROM messages WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(
          Effect.map(([row]) => row)
        ),
      // The thread's newest first (messages_newest_first), skipping outbound ones.
      latestInbound: (accountId, conversationId) =>
        read(sql`SELECT ${columns} FROM messages
                 WHERE account_id = ${accountId}::uuid AND conversation_id = ${conversationId} AND direction = 'inbound'
                 ORDER BY created_at DESC, id DESC LIMIT 1`).pipe(Effect.map(([row]) => row)),
      // Once: a second mark keeps the first time.
      markRead: (accountId, id, at) =>
        read(sql`UPDATE messages SET read_at = coalesce(read_at, ${at}::timestamptz),
                   updated_at = CASE WHEN read_at IS NULL THEN ${at}::timestamptz ELSE updated_at END
                 WHERE account_id = ${accountId}::uuid AND id = ${id} AND direction = 'inbound'
                 RETURNING ${columns}`).pipe(Effect.map(([row]) => row)),
      // Locked in id order, as every batch locks them: two batches never wait on each other in a cycle.
      // Each key is its own index probe (LATERAL), whatever the planner's statistics say.
      findForUpdate: (accountId, ids) =>
        read(sql`SELECT m.* FROM (SELECT DISTINCT id FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) AS k(id)
                                  ORDER BY id) AS k
                 CROSS JOIN LATERAL (SELECT ${columns} FROM messages WHERE account_id = ${accountId}::uuid AND id = k.id
                                     FOR UPDATE) AS m`),
      idsByExternalId: (accountId, channelId, externalIds) =>
        orDie(sql<{ id: string; external_id: string }>`
          SELECT m.id, m.external_id FROM jsonb_array_elements_text(${JSON.stringify(externalIds)}::jsonb) AS k(external_id)
          CROSS JOIN LATERAL (SELECT id, external_id FROM messages
            WHERE account_id = ${accountId}::uuid AND channel_id = ${channelId} AND external_id = k.external_id
            LIMIT 1) AS m`).pipe(Effect.map((rows) => new Map(rows.map((row) => [row.external_id, row.id])))),
      // Through the lead's threads (migration 0028 finds them by lead): no index leads with a message's lead_id.
      removeForLead: (accountId, leadId) =>
        read(
          sql`DELETE FROM messages
              WHERE account_id = ${accountId}::uuid
                AND conversation_id = ANY(ARRAY(SELECT id FROM conversations
                                                WHERE account_id = ${accountId}::uuid AND lead_id = ${leadId}))
                AND lead_id = ${leadId}
              RETURNING ${columns}`
        ),
      saveDeliveries: (accountId, saved) =>
        // A message leaving the queue drops its lease: no sender holds it any more.
        orDie(sql`
          UPDATE messages m SET status = d.status, error = d.error, external_id = d.external_id,
            provider_timestamp = d.provider_timestamp, updated_at = d.updated_at, sent_at = d.sent_at,
            delivered_at = d.delivered_at, read_at = d.read_at, failed_at = d.failed_at,
            lease_until = CASE WHEN d.status = 'queued' THEN m.lease_until END,
            lease_owner = CASE WHEN d.status = 'queued' THEN m.lease_owner END,
            sending_since = CASE WHEN d.status = 'queued' THEN m.sending_since END
          FROM jsonb_to_recordset(${JSON.stringify(
            saved.map((m) => ({
              id: m.id,
              status: m.status,
              error: m.error,
              external_id: m.external_id,
              provider_timestamp: m.provider_timestamp,
              updated_at: m.updated_at,
              sent_at: m.sent_at,
              delivered_at: m.delivered_at,
              read_at: m.read_at,
              failed_at: m.failed_at
            }))
          )}::jsonb) AS d(id text, status text, error jsonb, external_id text, provider_timestamp timestamptz,
            updated_at timestamptz, sent_at timestamptz, delivered_at timestamptz, read_at timestamptz,
            failed_at timestamptz)
          WHERE m.account_id = ${accountId}::uuid AND m.id = ANY(${textArray(saved.map((m) => m.id))}::text[])
            AND m.id = d.id`).pipe(Effect.asVoid),
      insertInbound: (accountId, inbound) =>
        // ON CONFLICT on the wamid: a redelivery is found by the index, and the transaction goes on.
        orDie(sql<{ id: string }>`
          INSERT INTO messages ${sql.insert(
            inbound.map((m) => ({
              account_id: accountId,
              id: m.id,
              conversation_id: m.conversation_id,
              lead_id: m.lead_id,
              channel_id: m.channel_id,
              direction: m.direction,
              type: m.type,
              text: m.text,
              template: jsonOrNull(m.template),
              interactive: jsonOrNull(m.interactive),
              reply_to: jsonOrNull(m.reply_to),
              media: jsonOrNull(m.media),
              status: m.status,
              error: jsonOrNull(m.error),
              external_id: m.external_id,
              sender_type: m.sender_type,
              sender_id: m.sender_id,
              campaign_id: m.campaign_id,
              scheduled_at: m.scheduled_at,
              provider_timestamp: m.provider_timestamp,
              provider_payload: jsonOrNull(m.provider_payload),
              created_at: m.created_at,
              updated_at: m.updated_at
            }))
          )}
          ON CONFLICT (account_id, channel_id, external_id) WHERE external_id IS NOT NULL DO NOTHING
          RETURNING id`).pipe(Effect.map((rows) => new Set(rows.map((row) => row.id)))),
      insertOutbound: (accountId, queued) =>
        // The sender is woken once the unit commits (Notifications.ts); polling is only its fallback.
        queued.length === 0
          ? Effect.void
          : orDie(sql`
          WITH inserted AS (${insertQueued(
            sql,
            accountId,
            sql`jsonb_to_recordset(${JSON.stringify(
              queued.map((m) => ({
                id: m.id,
                conversation_id: m.conversation_id,
                lead_id: m.lead_id,
                channel_id: m.channel_id,
                direction: m.direction,
                type: m.type,
                text: m.text,
                template: m.template,
                interactive: m.interactive,
                reply_to: m.reply_to,
                media: m.media,
                status: m.status,
                sender_type: m.sender_type,
                sender_id: m.sender_id,
                campaign_id: m.campaign_id,
                scheduled_at: m.scheduled_at,
                created_at: m.created_at,
                updated_at: m.updated_at
              }))
            )}::jsonb) AS m(id text, conversation_id text, lead_id text, channel_id text, direction text, type text,
              text text, template jsonb, interactive jsonb, reply_to jsonb, media jsonb, status text, sender_type text, sender_id text, campaign_id text,
              scheduled_at timestamptz, created_at timestamptz, updated_at timestamptz)`
          )})
          SELECT EXISTS (SELECT 1 FROM inserted) AS wrote`).pipe(Effect.flatMap(afterCommitIfWrote(messagesQueued))),
      // Not begun: a message whose send began (`sending_since`) ends by its own outcome.
      cancelQueued: (accountId, campaignId, now) =>
        read(sql`
          UPDATE messages SET status = 'cancelled', updated_at = ${now}::timestamptz,
            lease_until = NULL, lease_owner = NULL
          WHERE account_id = ${accountId}::uuid AND campaign_id = ${campaignId} AND status = 'queued'
            AND sending_since IS NULL
          RETURNING ${columns}`),
      countsByCampaign: (accountId, campaignIds) =>
        orDie(sql<{ campaign_id: string; status: OutboundStatus; n: number }>`
          SELECT campaign_id, status, count(*)::int AS n FROM messages
          WHERE account_id = ${accountId}::uuid AND campaign_id = ANY(${textArray(campaignIds)}::text[])
          GROUP BY campaign_id, status`).pipe(
          Effect.map((rows) => {
            const counts = new Map<string, Partial<Record<OutboundStatus, number>>>()
            for (const id of campaignIds) counts.set(id, {})
            for (const row of rows) counts.get(row.campaign_id)![row.status] = row.n
            return counts
          })
        ),
      campaignsWithQueued: (accountId, campaignIds) =>
        campaignIds.length === 0
          ? Effect.succeed(new Set<string>())
          : orDie(sql<{ campaign_id: string }>`
          SELECT k.campaign_id FROM jsonb_array_elements_text(${JSON.stringify(campaignIds)}::jsonb) AS k(campaign_id)
          WHERE EXISTS (SELECT 1 FROM messages WHERE account_id = ${accountId}::uuid AND campaign_id = k.campaign_id
                        AND status = 'queued')`).pipe(Effect.map((rows) => new Set(rows.map((row) => row.campaign_id))))
    })
  })
)

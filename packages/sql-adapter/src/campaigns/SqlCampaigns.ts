import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { Fragment as SqlFragment } from "effect/sql/Statement"
import { CampaignsRepo, type StoredCampaign } from "@leadline/core/campaigns/CampaignsRepo"
import type { Recipient } from "@leadline/core/campaigns/Recipient"
import { LEAD_DELETED } from "@leadline/core/campaigns/Recipient"
import { iso, isoOrNull, json, orDie, textArray } from "../internal/store.ts"
import { insertQueued } from "../messages/SqlMessages.ts"
import { MESSAGES_CHANNEL } from "../Notifications.ts"

// jsonb read as text: the drivers differ in whether they parse jsonb.
const COLUMNS = `id, name, channel_id, template::text AS template, audience::text AS audience, scheduled_at, status,
  error::text AS error, total, created_at, updated_at, queued_at, started_at, completed_at, cancelled_at`

const toCampaign = (row: Record<string, unknown>): StoredCampaign => ({
  id: row.id as string,
  name: row.name as string,
  channel_id: (row.channel_id as string | null) ?? null,
  template: json(row.template),
  audience: json(row.audience),
  scheduled_at: isoOrNull(row.scheduled_at),
  status: row.status as StoredCampaign["status"],
  error: row.error === null || row.error === undefined ? null : json(row.error),
  total: Number(row.total),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  queued_at: isoOrNull(row.queued_at),
  started_at: isoOrNull(row.started_at),
  completed_at: isoOrNull(row.completed_at),
  cancelled_at: isoOrNull(row.cancelled_at)
})

/**
 * A recipient's shown status and error: `Recipient.view` in SQL. Skipped with its reason, skipped
 * as `lead_deleted` when its message went with its lead, else as its message is.
 */
const RECIPIENT = `
  SELECT r.lead_id, r.phone, r.message_id,
    CASE WHEN r.skipped IS NOT NULL OR m.id IS NULL THEN 'skipped' ELSE m.status END AS status,
    CASE WHEN r.skipped IS NOT NULL THEN (r.skipped || '{"provider_code": null}'::jsonb)::text
         WHEN m.id IS NULL THEN '${JSON.stringify({ ...LEAD_DELETED, provider_code: null })}'
         ELSE m.error::text END AS error,
    coalesce(m.updated_at, r.created_at) AS updated_at
  FROM campaign_recipients r
  LEFT JOIN messages m ON m.account_id = r.account_id AND m.id = r.message_id`

/** Queues of at least this many messages refresh the statistics of the tables they wrote. */
const ANALYZE_AT_LEAST = 10_000

export const layer = Layer.effect(
  CampaignsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const read = (statement: Effect.Effect<ReadonlyArray<Record<string, unknown>>, any>) =>
      orDie(Effect.map(statement, (rows) => rows.map(toCampaign))) as Effect.Effect<ReadonlyArray<StoredCampaign>>
    const values = (accountId: string, c: StoredCampaign) => ({
      account_id: accountId,
      id: c.id,
      name: c.name,
      channel_id: c.channel_id,
      template: JSON.stringify(c.template),
      audience: JSON.stringify(c.audience),
      scheduled_at: c.scheduled_at,
      status: c.status,
      error: c.error === null ? null : JSON.stringify(c.error),
      total: c.total,
      created_at: c.created_at,
      updated_at: c.updated_at,
      queued_at: c.queued_at,
      started_at: c.started_at,
      completed_at: c.completed_at,
      cancelled_at: c.cancelled_at
    })

    return CampaignsRepo.of({
      list: (accountId, status, page) => {
        const where = sql.and([
          sql`account_id = ${accountId}::uuid`,
          ...(status === undefined ? [] : [sql`status = ${status}`])
        ])
        return Effect.all([
          read(sql`SELECT ${columns} FROM campaigns WHERE ${where}
                   ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`),
          orDie(sql<{ total: number }>`SELECT count(*)::int AS total FROM campaigns WHERE ${where}`)
        ]).pipe(Effect.map(([items, [count]]) => ({ items, total: count?.total ?? 0 })))
      },
      find: (accountId, id) =>
        read(sql`SELECT ${columns} FROM campaigns WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(
          Effect.map(([row]) => row)
        ),
      findForUpdate: (accountId, ids) =>
        read(sql`SELECT ${columns} FROM campaigns
                 WHERE account_id = ${accountId}::uuid AND id = ANY(${textArray(ids)}::text[])
                 ORDER BY id FOR UPDATE`),
      insert: (accountId, campaign) =>
        orDie(sql`INSERT INTO campaigns ${sql.insert(values(accountId, campaign))}`).pipe(Effect.asVoid),
      update: (accountId, c) =>
        orDie(sql`
          UPDATE campaigns SET name = ${c.name}, channel_id = ${c.channel_id}, template = ${JSON.stringify(c.template)}::jsonb,
            audience = ${JSON.stringify(c.audience)}::jsonb, scheduled_at = ${c.scheduled_at}::timestamptz,
            status = ${c.status}, error = ${c.error === null ? null : JSON.stringify(c.error)}::jsonb, total = ${c.total},
            updated_at = ${c.updated_at}::timestamptz, queued_at = ${c.queued_at}::timestamptz,
            started_at = ${c.started_at}::timestamptz, completed_at = ${c.completed_at}::timestamptz,
            cancelled_at = ${c.cancelled_at}::timestamptz
          WHERE account_id = ${accountId}::uuid AND id = ${c.id}`).pipe(Effect.asVoid),
      // Its recipients go with it (a draft has none; no foreign key cascades, migration 0024).
      remove: (accountId, id) =>
        orDie(
          sql<{ id: string }>`
            WITH gone AS (DELETE FROM campaigns WHERE account_id = ${accountId}::uuid AND id = ${id} RETURNING id),
            recipients AS (DELETE FROM campaign_recipients
                           WHERE account_id = ${accountId}::uuid AND campaign_id IN (SELECT id FROM gone))
            SELECT id FROM gone`
        ).pipe(Effect.map((rows) => rows.length > 0)),
      // One statement for a batch: the threads its leads lack, their messages, every recipient.
      queueRecipients: (accountId, campaignId, queued) =>
        Effect.gen(function* () {
          if (queued.length === 0) return
          const first = queued.find((r) => r.message !== null)?.message
          const rows = JSON.stringify(
            queued.map(({ snapshot, message, thread }) => ({
              lead_id: snapshot.lead_id,
              phone: snapshot.phone,
              skipped: snapshot.skipped,
              created_at: snapshot.created_at,
              message_id: message?.id ?? null,
              thread_id: thread?.id ?? null,
              template: message?.template ?? null
            }))
          )
          const channelId = first?.channel_id ?? null
          const now = queued[0]!.snapshot.created_at
          const scheduledAt = first?.scheduled_at ?? null
          // Each recipient's message in its thread, as `insertQueued` takes it.
          const insertMessages = (threads: SqlFragment) =>
            insertQueued(
              sql,
              accountId,
              sql`(SELECT r.message_id AS id, t.id AS conversation_id, r.lead_id, ${channelId}::text AS channel_id,
                     'outbound' AS direction, 'template' AS type, NULL::text AS text, r.template,
                     NULL::jsonb AS interactive, NULL::jsonb AS reply_to, NULL::jsonb AS media, 'queued' AS status,
                     'campaign' AS sender_type, ${campaignId}::text AS sender_id, ${campaignId}::text AS campaign_id,
                     ${scheduledAt}::timestamptz AS scheduled_at, ${now}::timestamptz AS created_at,
                     ${now}::timestamptz AS updated_at
                   FROM r JOIN ${threads} AS t ON t.lead_id = r.lead_id) AS m`
            )
          const inserted = yield* orDie(sql<{ id: string }>`
            WITH r AS (
              SELECT * FROM jsonb_to_recordset(${rows}::jsonb) AS r(lead_id text, phone text, skipped jsonb,
                created_at timestamptz, message_id text, thread_id text, template jsonb)
            ), made AS (
              INSERT INTO conversations (account_id, id, lead_id, channel_id, status, assigned_user_id, snoozed_until,
                contact_wa_id, last_message_at, last_inbound_at, created_at, updated_at)
              SELECT ${accountId}::uuid, r.thread_id, r.lead_id, ${channelId}, 'pending', NULL, NULL, NULL, NULL, NULL,
                ${now}::timestamptz, ${now}::timestamptz
              FROM r WHERE r.message_id IS NOT NULL
              ON CONFLICT (account_id, channel_id, lead_id) DO NOTHING
              RETURNING id, lead_id
            ), threads AS (
              SELECT id, lead_id FROM made
              UNION ALL
              SELECT c.id, c.lead_id FROM r
              JOIN conversations c ON c.account_id = ${accountId}::uuid AND c.channel_id = ${channelId}
                AND c.lead_id = r.lead_id
              WHERE r.message_id IS NOT NULL
            ), sent AS (${insertMessages(sql`threads`)}
            ), recorded AS (
              INSERT INTO campaign_recipients (account_id, campaign_id, lead_id, phone, message_id, skipped, created_at)
              SELECT ${accountId}::uuid, ${campaignId}, r.lead_id, r.phone, r.message_id, r.skipped, r.created_at FROM r
              RETURNING 1
            )
            SELECT id FROM sent`)
          const expected = queued.filter((r) => r.message !== null).length
          if (inserted.length < expected) {
            // A lead's thread made by another transaction after this statement's snapshot (its customer
            // wrote in at that moment): the INSERT waited for it and skipped, the join could not see it.
            // A new statement sees it.
            const done = new Set(inserted.map((row) => row.id))
            const missing = JSON.stringify(
              queued
                .filter((r) => r.message !== null && !done.has(r.message.id))
                .map((r) => ({ lead_id: r.snapshot.lead_id, message_id: r.message!.id, template: r.message!.template }))
            )
            yield* orDie(sql`
              WITH r AS (SELECT * FROM jsonb_to_recordset(${missing}::jsonb) AS r(lead_id text, message_id text, template jsonb))
              ${insertMessages(
                sql`(SELECT c.id, c.lead_id FROM conversations c WHERE c.account_id = ${accountId}::uuid
                     AND c.channel_id = ${channelId} AND c.lead_id IN (SELECT lead_id FROM r))`
              )}`)
          }
          // The sender is woken at COMMIT (NOTIFY is transactional); polling is only its fallback.
          if (expected > 0) yield* orDie(sql`SELECT pg_notify(${MESSAGES_CHANNEL}, '')`)
        }),
      // Autovacuum analyzes a minute later at best: until then the planner takes the messages and
      // threads for what they were before, and the sender's claim sorted every queued message for
      // each batch of 50 (300-600 ms a claim, about 150 messages/s, until statistics existed).
      // ANALYZE inside the transaction counts its own rows, and its statistics commit with them.
      // A sample of 3,000 rows a table (statistics target 10, for this transaction only) is enough to
      // give the planner the new sizes and each column's shape; at the default 100 it took 0.8 s of
      // the queue's 9-10 s for 100,000 recipients. Autovacuum's ANALYZE refines it later. (Fewer
      // columns instead left the ids without statistics, and the sender's plans over them went bad.)
      queueWritten: (queued) =>
        queued < ANALYZE_AT_LEAST
          ? Effect.void
          : orDie(
              Effect.andThen(sql`SET LOCAL default_statistics_target = 10`, sql`ANALYZE messages, conversations`)
            ).pipe(Effect.asVoid),
      recipients: (accountId, campaignId, status, page) => {
        const shown = sql`SELECT * FROM (${sql.unsafe(RECIPIENT)}
          WHERE r.account_id = ${accountId}::uuid AND r.campaign_id = ${campaignId}) AS shown
          WHERE ${status === undefined ? sql`true` : sql`status = ${status}`}`
        return Effect.all([
          orDie(
            sql<Record<string, unknown>>`${shown} ORDER BY lead_id LIMIT ${page.limit}::int OFFSET ${page.offset}::int`
          ),
          orDie(sql<{ total: number }>`SELECT count(*)::int AS total FROM (${shown}) AS counted`)
        ]).pipe(
          Effect.map(([rows, [count]]) => ({
            items: rows.map(
              (row): Recipient => ({
                lead_id: row.lead_id as string,
                phone: row.phone as string,
                status: row.status as Recipient["status"],
                message_id: (row.message_id as string | null) ?? null,
                error: row.error === null || row.error === undefined ? null : json(row.error),
                updated_at: iso(row.updated_at)
              })
            ),
            total: count?.total ?? 0
          }))
        )
      }
    })
  })
)

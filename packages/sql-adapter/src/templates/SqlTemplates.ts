import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { MessageTemplate } from "@leadline/core/templates/Template"
import { TemplatesRepo } from "@leadline/core/templates/TemplatesRepo"
import { iso, isoOrNull, json, orDie, textArray } from "../internal/store.ts"

interface Row {
  readonly id: string
  readonly business_account_id: string
  readonly external_id: string | null
  readonly name: string
  readonly language: string
  readonly category: string
  readonly status: string
  readonly quality: string
  readonly rejected_reason: string | null
  readonly components: unknown
  readonly created_at: unknown
  readonly updated_at: unknown
}

const COLUMNS = `id, business_account_id, external_id, name, language, category, status, quality, rejected_reason,
  components::text AS components, created_at, updated_at`

/** The columns read, of the table under another name (a CTE's). */
const columnsOf = (alias: string) => COLUMNS.replace(/(^|,\s*)(\w+)/g, `$1${alias}.$2`)

const fromRow = (row: Row): MessageTemplate => ({
  ...row,
  components: json<ReadonlyArray<unknown>>(row.components),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

export const layer = Layer.effect(
  TemplatesRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const afterColumns = sql.unsafe(columnsOf("after"))

    const put = (accountId: string, t: MessageTemplate) =>
      sql`INSERT INTO message_templates (account_id, id, business_account_id, external_id, name, language, category,
            status, quality, rejected_reason, components, created_at, updated_at)
          VALUES (${accountId}::uuid, ${t.id}, ${t.business_account_id}, ${t.external_id}, ${t.name}, ${t.language},
            ${t.category}, ${t.status}, ${t.quality}, ${t.rejected_reason}, ${JSON.stringify(t.components)}::jsonb,
            ${t.created_at}::timestamptz, ${t.updated_at}::timestamptz)
          ON CONFLICT (account_id, business_account_id, name, language) DO UPDATE SET id = EXCLUDED.id,
            external_id = EXCLUDED.external_id, category = EXCLUDED.category, status = EXCLUDED.status,
            quality = EXCLUDED.quality, rejected_reason = EXCLUDED.rejected_reason, components = EXCLUDED.components,
            created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at`

    return TemplatesRepo.of({
      list: (accountId, filter, page) => {
        const where = sql.and([
          sql`account_id = ${accountId}::uuid`,
          ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
          ...(filter.name === undefined ? [] : [sql`name = ${filter.name}`]),
          ...(filter.business_account_id === undefined
            ? []
            : [sql`business_account_id = ${filter.business_account_id}`])
        ])
        return orDie(
          Effect.all([
            sql<Row>`SELECT ${columns} FROM message_templates WHERE ${where}
                     ORDER BY name, language, business_account_id LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
            sql<{ total: number }>`SELECT count(*)::int AS total FROM message_templates WHERE ${where}`
          ])
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(fromRow), total: count?.total ?? 0 })))
      },
      find: (accountId, id) =>
        orDie(
          sql<Row>`SELECT ${columns} FROM message_templates WHERE account_id = ${accountId}::uuid AND id = ${id}`
        ).pipe(Effect.map(([row]) => (row === undefined ? undefined : fromRow(row)))),
      ofBusinessAccount: (accountId, businessAccountId) =>
        orDie(
          Effect.all([
            sql<Row>`SELECT ${columns} FROM message_templates
                     WHERE account_id = ${accountId}::uuid AND business_account_id = ${businessAccountId}
                     ORDER BY name, language`,
            sql<{ synced_at: unknown }>`SELECT synced_at FROM template_syncs
                     WHERE account_id = ${accountId}::uuid AND business_account_id = ${businessAccountId}`
          ])
        ).pipe(
          Effect.map(([rows, [sync]]) => ({ templates: rows.map(fromRow), syncedAt: isoOrNull(sync?.synced_at) }))
        ),
      replace: (accountId, businessAccountId, templates, now) =>
        orDie(
          Effect.gen(function* () {
            yield* sql`DELETE FROM message_templates
                       WHERE account_id = ${accountId}::uuid AND business_account_id = ${businessAccountId}`
            for (const template of templates) yield* put(accountId, template)
            yield* sql`INSERT INTO template_syncs (account_id, business_account_id, synced_at)
                       VALUES (${accountId}::uuid, ${businessAccountId}, ${now}::timestamptz)
                       ON CONFLICT (account_id, business_account_id) DO UPDATE SET synced_at = EXCLUDED.synced_at`
          })
        ),
      insert: (accountId, t) =>
        orDie(
          sql<{ id: string }>`INSERT INTO message_templates (account_id, id, business_account_id, external_id, name,
                language, category, status, quality, rejected_reason, components, created_at, updated_at)
              VALUES (${accountId}::uuid, ${t.id}, ${t.business_account_id}, ${t.external_id}, ${t.name}, ${t.language},
                ${t.category}, ${t.status}, ${t.quality}, ${t.rejected_reason}, ${JSON.stringify(t.components)}::jsonb,
                ${t.created_at}::timestamptz, ${t.updated_at}::timestamptz)
              ON CONFLICT (account_id, business_account_id, name, language) DO NOTHING
              RETURNING id`
        ).pipe(Effect.map((rows) => rows.length === 1)),
      recordCreated: (accountId, id, created, now) =>
        orDie(
          sql`UPDATE message_templates SET external_id = ${created.externalId}, category = ${created.category},
                status = CASE WHEN status = 'PENDING' THEN ${created.status} ELSE status END,
                updated_at = ${now}::timestamptz
              WHERE account_id = ${accountId}::uuid AND id = ${id}`
        ).pipe(Effect.asVoid),
      remove: (accountId, ids) =>
        ids.length === 0
          ? Effect.void
          : orDie(
              sql`DELETE FROM message_templates WHERE account_id = ${accountId}::uuid AND id = ANY(${textArray(ids)}::text[])`
            ).pipe(Effect.asVoid),
      // The rows as they were (whole, as JSON) and as they are, in one statement: the caller emits each change's event.
      applyUpdate: (update, now) =>
        orDie(
          sql<Row & { account_id: string; before: Row }>`
            WITH before AS (
              SELECT t.* FROM message_templates t
              WHERE t.business_account_id = ${update.businessAccountId}
                AND (t.external_id = ${update.externalId}
                     OR (t.external_id IS NULL AND t.name = ${update.name ?? null} AND t.language = ${update.language ?? null}))
              FOR UPDATE
            ), after AS (
              UPDATE message_templates t SET
                status = coalesce(${update.status ?? null}, t.status),
                rejected_reason = CASE WHEN ${update.status ?? null}::text IS NULL THEN t.rejected_reason
                                       ELSE ${update.rejectedReason ?? null} END,
                quality = coalesce(${update.quality ?? null}, t.quality),
                category = coalesce(${update.category ?? null}, t.category),
                updated_at = ${now}::timestamptz
              FROM before WHERE t.account_id = before.account_id AND t.id = before.id
              RETURNING t.*
            )
            SELECT after.account_id, ${afterColumns}, to_jsonb(before) - 'account_id' AS before
            FROM after JOIN before ON before.account_id = after.account_id AND before.id = after.id`
        ).pipe(
          Effect.map((rows) =>
            rows.map(({ account_id, before, ...after }) => ({
              accountId: account_id,
              before: fromRow(json<Row>(before)),
              after: fromRow(after)
            }))
          )
        ),
      claimSync: (accountId, businessAccountId, now, until) =>
        orDie(
          sql<{ claimed: boolean }>`INSERT INTO template_syncs (account_id, business_account_id, claimed_until)
              VALUES (${accountId}::uuid, ${businessAccountId}, ${until}::timestamptz)
              ON CONFLICT (account_id, business_account_id) DO UPDATE SET claimed_until = EXCLUDED.claimed_until
                WHERE template_syncs.claimed_until IS NULL OR template_syncs.claimed_until <= ${now}::timestamptz
              RETURNING true AS claimed`
        ).pipe(Effect.map((rows) => rows.length === 1)),
      releaseSync: (accountId, businessAccountId) =>
        orDie(
          sql`UPDATE template_syncs SET claimed_until = NULL
              WHERE account_id = ${accountId}::uuid AND business_account_id = ${businessAccountId}`
        ).pipe(Effect.asVoid)
    })
  })
)

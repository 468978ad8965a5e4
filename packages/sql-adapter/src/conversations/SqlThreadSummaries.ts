import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { ThreadSummaries, type ThreadSummary } from "@leadline/core/conversations/ThreadSummaries"
import { iso, orDie } from "../internal/store.ts"

/**
 * One statement for a page of threads, each its own index probes (`messages_newest_first`): the
 * newest message, the newest inbound one read, and the inbound ones after it, counted. A thread
 * never read counts all its inbound messages; unread messages are few, so the walk is short.
 */
export const layer = Layer.effect(
  ThreadSummaries,
  Effect.map(SqlClient.SqlClient, (sql) =>
    ThreadSummaries.of({
      summaries: (accountId, conversationIds) =>
        conversationIds.length === 0
          ? Effect.succeed(new Map())
          : orDie(
              sql<Record<string, unknown>>`SELECT k.id AS conversation_id, m.id, m.direction, m.type, m.text,
                  m.template->>'name' AS template_name, m.media->>'filename' AS filename, m.status, m.created_at,
                  u.unread
                FROM (SELECT DISTINCT id FROM jsonb_array_elements_text(${JSON.stringify(conversationIds)}::jsonb) AS k(id)) AS k
                CROSS JOIN LATERAL (SELECT * FROM messages
                  WHERE account_id = ${accountId}::uuid AND conversation_id = k.id
                  ORDER BY created_at DESC, id DESC LIMIT 1) AS m
                LEFT JOIN LATERAL (SELECT r.created_at, r.id FROM messages r
                  WHERE r.account_id = ${accountId}::uuid AND r.conversation_id = k.id
                    AND r.direction = 'inbound' AND r.read_at IS NOT NULL
                  ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS seen ON true
                CROSS JOIN LATERAL (SELECT count(*)::int AS unread FROM messages i
                  WHERE i.account_id = ${accountId}::uuid AND i.conversation_id = k.id AND i.direction = 'inbound'
                    AND (seen.id IS NULL OR (i.created_at, i.id) > (seen.created_at, seen.id))) AS u`
            ).pipe(
              Effect.map(
                (rows) =>
                  new Map(
                    rows.map((row): [string, ThreadSummary] => [
                      row.conversation_id as string,
                      {
                        last: {
                          id: row.id as string,
                          direction: row.direction as "inbound" | "outbound",
                          type: row.type as string,
                          text: (row.text as string | null) ?? null,
                          template: row.template_name == null ? null : { name: row.template_name },
                          media: row.filename == null ? null : { filename: row.filename as string },
                          status: row.status as string,
                          created_at: iso(row.created_at)
                        },
                        unread: Number(row.unread)
                      }
                    ])
                  )
              )
            )
    })
  )
)

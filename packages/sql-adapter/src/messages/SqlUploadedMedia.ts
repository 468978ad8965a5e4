import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { UploadedMedia } from "@leadline/core/messages/UploadedMedia"
import { UploadedMediaRepo } from "@leadline/core/messages/UploadedMediaRepo"
import { iso, orDie } from "../internal/store.ts"

interface Row {
  readonly id: string
  readonly type: UploadedMedia["type"]
  readonly mime_type: string
  readonly size: number | string
  readonly sha256: string
  readonly filename: string | null
  readonly created_at: unknown
}

const fromRow = (row: Row): UploadedMedia => ({
  ...row,
  size: Number(row.size),
  created_at: iso(row.created_at)
})

/** Uploaded files' records and Graph's id of each per channel (migration 0037). */
export const layer = Layer.effect(
  UploadedMediaRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return UploadedMediaRepo.of({
      insert: (accountId, m) =>
        orDie(sql`INSERT INTO uploaded_media (account_id, id, type, mime_type, size, sha256, filename, created_at)
          VALUES (${accountId}::uuid, ${m.id}, ${m.type}, ${m.mime_type}, ${m.size}, ${m.sha256}, ${m.filename},
            ${m.created_at}::timestamptz)`).pipe(Effect.asVoid),
      find: (accountId, id) =>
        orDie(
          sql<Row>`SELECT id, type, mime_type, size, sha256, filename, created_at FROM uploaded_media
                   WHERE account_id = ${accountId}::uuid AND id = ${id}`
        ).pipe(Effect.map(([row]) => (row === undefined ? undefined : fromRow(row)))),
      graphUpload: (accountId, mediaId, channelId) =>
        orDie(
          sql<{ graph_media_id: string; uploaded_at: unknown }>`SELECT graph_media_id, uploaded_at
            FROM media_graph_uploads
            WHERE account_id = ${accountId}::uuid AND media_id = ${mediaId} AND channel_id = ${channelId}`
        ).pipe(
          Effect.map(([row]) =>
            row === undefined ? undefined : { graphMediaId: row.graph_media_id, uploadedAt: iso(row.uploaded_at) }
          )
        ),
      recordGraphUpload: (accountId, mediaId, channelId, upload) =>
        orDie(sql`INSERT INTO media_graph_uploads (account_id, media_id, channel_id, graph_media_id, uploaded_at)
          VALUES (${accountId}::uuid, ${mediaId}, ${channelId}, ${upload.graphMediaId}, ${upload.uploadedAt}::timestamptz)
          ON CONFLICT (account_id, media_id, channel_id) DO UPDATE
            SET graph_media_id = EXCLUDED.graph_media_id, uploaded_at = EXCLUDED.uploaded_at`).pipe(Effect.asVoid)
    })
  })
)

import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Inbound files kept (docs/contract-messaging.md §5.8): the fetch queue (a file waits there,
 * leased by the fetcher holding it, until its media ends `stored` or `failed`), and the bytes of
 * the PostgreSQL media store, in chunks of 256 KiB under an upload id, so a file being written
 * is never read and a failed one is deleted whole. A message stored before this migration had
 * its file never fetched: its media reads `failed` with the reason `not_kept`.
 */
export const migration = Migration.make(
  "0031_message_media",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE media_downloads (
      account_id uuid NOT NULL,
      message_id text NOT NULL,
      not_before timestamptz NOT NULL,
      lease_until timestamptz,
      lease_owner text,
      attempts integer NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, message_id),
      FOREIGN KEY (account_id, message_id) REFERENCES messages (account_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX media_downloads_due ON media_downloads (not_before)`
    yield* sql`CREATE TABLE media_objects (
      key text PRIMARY KEY,
      upload text NOT NULL,
      content_type text NOT NULL,
      size bigint NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
    yield* sql`CREATE TABLE media_chunks (
      upload text NOT NULL,
      seq integer NOT NULL,
      bytes bytea NOT NULL,
      PRIMARY KEY (upload, seq)
    )`
    yield* sql`UPDATE messages SET media = media || '{"state": "failed", "reason": "not_kept", "size": null}'::jsonb
               WHERE media IS NOT NULL AND NOT (media ? 'state')`
  })
)

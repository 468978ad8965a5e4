import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Files uploaded to be sent (docs/contract-messaging.md §5.9): what each is (its bytes are in the
 * media store, under the account and the media id), and the id Graph gave it on each channel it
 * was sent on, with when, so a file is uploaded once per channel and again after Graph's 30 days.
 */
export const migration = Migration.make(
  "0037_uploaded_media",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE uploaded_media (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      type text NOT NULL,
      mime_type text NOT NULL,
      size bigint NOT NULL,
      sha256 text NOT NULL,
      filename text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, id)
    )`
    yield* sql`CREATE TABLE media_graph_uploads (
      account_id uuid NOT NULL,
      media_id text NOT NULL,
      channel_id text NOT NULL,
      graph_media_id text NOT NULL,
      uploaded_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, media_id, channel_id),
      FOREIGN KEY (account_id, media_id) REFERENCES uploaded_media (account_id, id) ON DELETE CASCADE
    )`
  })
)

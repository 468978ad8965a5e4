import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * The PostgreSQL media store's files and their chunks keyed by account (docs/scaling.md, "Citus"),
 * as every account's table is: an object's key was `<account>/<id>` (`MediaStore.keyOf`), and is
 * now its two columns; a chunk takes the account of the object that names its upload.
 *
 * A key that did not start with an account id, and a chunk no object names (what a failed
 * write left, or one still being written by a server of the old version), could never be read:
 * they are deleted.
 */
export const migration = Migration.make(
  "0045_media_keyed_by_account",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM media_objects
               WHERE key !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.'`
    yield* sql`ALTER TABLE media_objects ADD COLUMN account_id uuid`
    yield* sql`UPDATE media_objects SET account_id = split_part(key, '/', 1)::uuid, key = substr(key, 38)`
    yield* sql`ALTER TABLE media_objects RENAME COLUMN key TO id`
    yield* sql`ALTER TABLE media_objects ALTER COLUMN account_id SET NOT NULL,
                                         DROP CONSTRAINT media_objects_pkey, ADD PRIMARY KEY (account_id, id)`

    yield* sql`ALTER TABLE media_chunks ADD COLUMN account_id uuid`
    yield* sql`UPDATE media_chunks c SET account_id = o.account_id FROM media_objects o WHERE o.upload = c.upload`
    yield* sql`DELETE FROM media_chunks WHERE account_id IS NULL`
    yield* sql`ALTER TABLE media_chunks ALTER COLUMN account_id SET NOT NULL,
                                        DROP CONSTRAINT media_chunks_pkey, ADD PRIMARY KEY (account_id, upload, seq)`
  })
)

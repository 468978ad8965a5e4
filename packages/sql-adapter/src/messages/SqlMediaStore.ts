import { Effect, Layer, Option, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { type MediaKey, MediaStore } from "@leadline/core/messages/MediaStore"
import { orDie } from "../internal/store.ts"

/** One row's bytes: small enough for one statement's parameter, large enough to keep rows few. */
export const CHUNK_BYTES = 256 * 1024

const uploadId = () => globalThis.crypto.randomUUID()

/** bytea comes back as a Buffer from PostgreSQL's driver and a Uint8Array from PGlite. */
const bytesOf = (value: unknown): Uint8Array =>
  value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBufferLike)

/**
 * `MediaStore` in PostgreSQL (migrations 0031 and 0045), for several servers on one database: a
 * file's bytes in rows of 256 KiB under its account and an upload id, written as they arrive; the
 * object row that makes them readable is written last, with the old upload's rows deleted in the
 * same transaction. Reading pulls one row at a time.
 */
export const layer = Layer.effect(
  MediaStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const writeChunk = (accountId: string, upload: string, seq: number, bytes: Uint8Array) =>
      orDie(sql`INSERT INTO media_chunks (account_id, upload, seq, bytes)
                VALUES (${accountId}::uuid, ${upload}, ${seq}::int, ${bytes})`)

    const dropUpload = (accountId: string, upload: string) =>
      orDie(sql`DELETE FROM media_chunks WHERE account_id = ${accountId}::uuid AND upload = ${upload}`)

    const object = (key: MediaKey) => sql`account_id = ${key.accountId}::uuid AND id = ${key.id}`

    return MediaStore.of({
      put: (key, contentType, bytes) =>
        Effect.gen(function* () {
          const upload = uploadId()
          let pending: Array<Uint8Array> = []
          let pendingBytes = 0
          let seq = 0
          let size = 0
          const flush = Effect.suspend(() => {
            if (pendingBytes === 0) return Effect.void
            const joined = new Uint8Array(pendingBytes)
            let offset = 0
            for (const piece of pending) {
              joined.set(piece, offset)
              offset += piece.length
            }
            pending = []
            pendingBytes = 0
            return writeChunk(key.accountId, upload, seq++, joined)
          })
          const write = Effect.gen(function* () {
            yield* Stream.runForEach(bytes, (chunk) =>
              Effect.gen(function* () {
                size += chunk.length
                let rest = chunk
                while (pendingBytes + rest.length >= CHUNK_BYTES) {
                  const take = CHUNK_BYTES - pendingBytes
                  pending.push(rest.subarray(0, take))
                  pendingBytes += take
                  rest = rest.subarray(take)
                  yield* flush
                }
                if (rest.length > 0) {
                  pending.push(rest)
                  pendingBytes += rest.length
                }
              })
            )
            yield* flush
            yield* orDie(
              sql.withTransaction(
                Effect.gen(function* () {
                  const [old] = yield* sql<{ upload: string }>`
                    SELECT upload FROM media_objects WHERE ${object(key)} FOR UPDATE`
                  yield* sql`
                    INSERT INTO media_objects (account_id, id, upload, content_type, size)
                    VALUES (${key.accountId}::uuid, ${key.id}, ${upload}, ${contentType}, ${size})
                    ON CONFLICT (account_id, id) DO UPDATE SET upload = excluded.upload,
                      content_type = excluded.content_type, size = excluded.size, created_at = now()`
                  if (old !== undefined) yield* dropUpload(key.accountId, old.upload)
                })
              )
            )
            return size
          })
          // A failed stream leaves nothing: its rows go, and no object ever named them.
          return yield* Effect.onError(write, () => dropUpload(key.accountId, upload))
        }),
      get: (key) =>
        orDie(
          sql<{ upload: string; content_type: string; size: unknown }>`
            SELECT upload, content_type, size FROM media_objects WHERE ${object(key)}`
        ).pipe(
          Effect.map(([stored]) =>
            stored === undefined
              ? undefined
              : {
                  contentType: stored.content_type,
                  size: Number(stored.size),
                  bytes: Stream.paginate(0, (seq: number) =>
                    orDie(
                      sql<{ bytes: unknown }>`
                        SELECT bytes FROM media_chunks
                        WHERE account_id = ${key.accountId}::uuid AND upload = ${stored.upload} AND seq = ${seq}::int`
                    ).pipe(
                      Effect.map(([row]) =>
                        row === undefined
                          ? ([[], Option.none()] as const)
                          : ([[bytesOf(row.bytes)], Option.some(seq + 1)] as const)
                      )
                    )
                  )
                }
          )
        ),
      remove: (key) =>
        orDie(
          sql.withTransaction(
            Effect.gen(function* () {
              const gone = yield* sql<{ upload: string }>`
                DELETE FROM media_objects WHERE ${object(key)} RETURNING upload`
              for (const { upload } of gone) yield* dropUpload(key.accountId, upload)
            })
          )
        ).pipe(Effect.asVoid)
    })
  })
)

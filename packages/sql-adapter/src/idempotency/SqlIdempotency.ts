import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { IdempotencyStore, type KeyRef, type Reservation } from "@leadline/core/idempotency/IdempotencyStore"
import { orDie } from "../internal/store.ts"
import { awaitFlush, forget, mayPresume, note, noted, notes, presume } from "../UnitOfWork.ts"

const at = (millis: number) => new Date(millis).toISOString()

interface Presumed {
  readonly fingerprint: string
  readonly now: number
  readonly expiresAt: number
}

// What a presumed reservation promised, kept for the unit's later steps on the same key.
const presumptions = notes<Presumed>("idempotency:presumed")
const noteOf = (ref: KeyRef) => `${ref.accountId}:${ref.key}`

export const layer = Layer.effect(
  IdempotencyStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    // Inserting (or taking over an expired record) is the reservation. A twin
    // inserting the same key concurrently waits on the unique index until this
    // transaction ends, then finds the stored response: it never runs twice.
    const reserveNow = (ref: KeyRef, fingerprint: string, now: number, expiresAt: number): Effect.Effect<Reservation> =>
      orDie(
        Effect.gen(function* () {
          const taken = yield* sql`
              INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at, expires_at)
              VALUES (${ref.accountId}::uuid, ${ref.key}, ${fingerprint}, ${at(now)}::timestamptz, ${at(expiresAt)}::timestamptz)
              ON CONFLICT (account_id, key) DO UPDATE SET
                fingerprint = EXCLUDED.fingerprint, status = NULL, content_type = NULL, body = NULL, etag = NULL,
                created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
              WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
              RETURNING key`
          if (taken.length > 0) return { _tag: "Reserved" } satisfies Reservation
          const [row] = yield* sql<{
            fingerprint: string
            status: number | null
            content_type: string | null
            body: string | null
            etag: string | null
          }>`SELECT fingerprint, status, content_type, body, etag FROM idempotency_keys
               WHERE account_id = ${ref.accountId}::uuid AND key = ${ref.key}`
          if (row === undefined || row.status === null) {
            return { _tag: "InProgress", fingerprint: row?.fingerprint ?? fingerprint } satisfies Reservation
          }
          // The answer repeated may be a commit's whose flush is still running (an order's).
          yield* awaitFlush
          return {
            _tag: "Completed",
            fingerprint: row.fingerprint,
            response: {
              status: row.status,
              contentType: row.content_type ?? "application/json",
              body: row.body ?? "",
              ...(row.etag === null ? {} : { etag: row.etag })
            }
          } satisfies Reservation
        })
      )

    return IdempotencyStore.of({
      // A unit that may presume (UnitOfWork.ts) presumes the key new: no statement now, and
      // the whole record goes in with the unit's end, where a key already taken (even an expired
      // one) breaks the primary key and the unit runs again, reserving with `reserveNow`.
      reserve: (ref, fingerprint, now, expiresAt) =>
        Effect.flatMap(mayPresume, (presuming) =>
          presuming
            ? Effect.as(
                Effect.andThen(
                  presume(),
                  note(presumptions, noteOf(ref), { fingerprint, now, expiresAt } satisfies Presumed)
                ),
                { _tag: "Reserved" } satisfies Reservation
              )
            : reserveNow(ref, fingerprint, now, expiresAt)
        ),
      complete: (ref, response) =>
        Effect.flatMap(noted(presumptions, noteOf(ref)), (presumed) =>
          presumed === undefined
            ? orDie(
                sql`UPDATE idempotency_keys SET status = ${response.status}::int, content_type = ${response.contentType},
                      body = ${response.body}, etag = ${response.etag ?? null}
                    WHERE account_id = ${ref.accountId}::uuid AND key = ${ref.key}`
              ).pipe(Effect.asVoid)
            : Effect.andThen(
                forget(presumptions, noteOf(ref)),
                presume(sql`
                  INSERT INTO idempotency_keys
                    (account_id, key, fingerprint, created_at, expires_at, status, content_type, body, etag)
                  VALUES (${ref.accountId}::uuid, ${ref.key}, ${presumed.fingerprint}, ${at(presumed.now)}::timestamptz,
                          ${at(presumed.expiresAt)}::timestamptz, ${response.status}::int, ${response.contentType},
                          ${response.body}, ${response.etag ?? null})`)
              )
        ),
      release: (ref) =>
        Effect.flatMap(noted(presumptions, noteOf(ref)), (presumed) =>
          presumed === undefined
            ? orDie(
                sql`DELETE FROM idempotency_keys WHERE account_id = ${ref.accountId}::uuid AND key = ${ref.key}`
              ).pipe(Effect.asVoid)
            : forget(presumptions, noteOf(ref))
        ),
      purgeExpired: (now) =>
        orDie(
          sql<{
            n: number
          }>`WITH gone AS (DELETE FROM idempotency_keys WHERE expires_at <= ${at(now)}::timestamptz RETURNING 1)
                             SELECT count(*)::int AS n FROM gone`
        ).pipe(Effect.map(([row]) => row?.n ?? 0))
    })
  })
)

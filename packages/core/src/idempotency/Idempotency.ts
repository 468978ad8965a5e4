import * as OpsMetrics from "../observability/OpsMetrics.ts"
import { Clock, Context, Duration, Effect, Layer, Metric, Schema } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { type DomainError, IdempotencyInProgress, IdempotencyKeyReused } from "../Errors.ts"
import { FinalWrites, Transactor } from "../Transactor.ts"
import { IdempotencyStore, type StoredResponse } from "./IdempotencyStore.ts"
import * as Tracing from "../Tracing.ts"

export const RETENTION = Duration.hours(24)
export const MAX_KEY_LENGTH = 200

/** 1 to 200 printable ASCII characters. */
export const IdempotencyKey = Schema.String.check(
  Schema.isPattern(/^[\x20-\x7e]{1,200}$/, {
    message: `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters`
  })
).annotate({
  description:
    "Makes a create safe to retry: the first response is kept for 24 hours per account and replayed for the same key."
})

export interface Outcome {
  readonly response: StoredResponse
  readonly replayed: boolean
}

/**
 * The idempotency rules, independent of transport: the caller supplies the
 * request fingerprint and the operation producing a response.
 */
export class Idempotency extends Context.Service<
  Idempotency,
  {
    readonly execute: <E, R>(
      key: string,
      fingerprint: string,
      operation: Effect.Effect<StoredResponse, E, R>
    ) => Effect.Effect<Outcome, E | DomainError | IdempotencyInProgress | IdempotencyKeyReused, R | CurrentPrincipal>
  }
>()("core/Idempotency") {
  static readonly layer = Layer.effect(
    Idempotency,
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const transactor = yield* Transactor
      const retention = Duration.toMillis(RETENTION)

      const execute = <E, R>(key: string, fingerprint: string, operation: Effect.Effect<StoredResponse, E, R>) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          const ref = { accountId: principal.accountId, key }
          const now = yield* Clock.currentTimeMillis
          // The record and the operation's writes commit together, so a crash
          // between them can neither lose the response nor run the operation twice.
          return yield* transactor
            .withTransaction(
              Effect.gen(function* () {
                const reservation = yield* store.reserve(ref, fingerprint, now, now + retention)
                if (reservation._tag !== "Reserved") {
                  if (reservation.fingerprint !== fingerprint) return yield* new IdempotencyKeyReused()
                  if (reservation._tag === "InProgress") return yield* new IdempotencyInProgress()
                  return { response: reservation.response, replayed: true }
                }
                const deferred: Array<Effect.Effect<void, DomainError>> = []
                const finalWrites = FinalWrites.of({ defer: (write) => Effect.sync(() => void deferred.push(write)) })
                const response = yield* operation.pipe(
                  Effect.provideService(FinalWrites, finalWrites),
                  Effect.onError(() => Effect.ignore(store.release(ref)))
                )
                // A server error is not an answer to keep: the client may retry with the same key.
                yield* response.status >= 500 ? store.release(ref) : store.complete(ref, response)
                // The operation's deferred writes last (a hot row's lock held for the commit only); one
                // that fails rolls everything back, the record included, and its error is the answer.
                for (const write of deferred) yield* write
                return { response, replayed: false }
              })
            )
            .pipe(
              Effect.tap((outcome) =>
                Metric.update(OpsMetrics.idempotencyRequests[outcome.replayed ? "replayed" : "new"], 1)
              ),
              Effect.tapError((error) =>
                error instanceof IdempotencyKeyReused
                  ? Metric.update(OpsMetrics.idempotencyRequests.key_reused, 1)
                  : error instanceof IdempotencyInProgress
                    ? Metric.update(OpsMetrics.idempotencyRequests.in_progress, 1)
                    : Effect.void
              )
            )
        }).pipe(Tracing.span("Idempotency.execute"))

      return Idempotency.of({ execute })
    })
  )
}

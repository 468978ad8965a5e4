import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { IdempotencyStore } from "./IdempotencyStore.ts"

/**
 * Deletes expired idempotency records on a schedule, so the table holds about
 * one day of keys. Expired records are already ignored by `reserve`; this only
 * reclaims the space.
 */
export const layer = (every: Duration.Input = Duration.hours(1)) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const purgeOnce = Effect.flatMap(Clock.currentTimeMillis, store.purgeExpired).pipe(
        Effect.tap((purged) =>
          purged > 0 ? Effect.logDebug(`purged ${purged} expired idempotency keys`) : Effect.void
        ),
        // A failed purge (the database is away) is retried at the next tick.
        Effect.catchCause((cause) => Effect.logWarning("idempotency purge failed", cause))
      )
      yield* Effect.forkScoped(Effect.repeat(purgeOnce, Schedule.spaced(every)))
    })
  )

import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { RETENTION_DAYS } from "../eventlog/Events.ts"
import * as Random from "../internal/random.ts"
import { WebhooksRepo } from "./WebhooksRepo.ts"

const DAY_MILLIS = 24 * 3600 * 1000
/** Events deleted per statement: short transactions, so the outbox's inserts never wait long. */
const BATCH = 5_000

/**
 * Keeps the event log to its 30 days (docs/contract.md, "Events"): on a schedule, the events older
 * than that are deleted with their deliveries and attempts, in batches, except those a delivery still
 * waits for (a paused endpoint's). `GET /api/v1/events` never shows them anyway; this reclaims the space.
 */
export const layer = (every: Duration.Input = Duration.hours(1)) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const repo = yield* WebhooksRepo
      const purgeOnce = Effect.gen(function* () {
        const cutoff = (yield* Clock.currentTimeMillis) - RETENTION_DAYS * DAY_MILLIS
        const before = `evt_${Random.ulidFloor(cutoff)}`
        let purged = 0
        while (true) {
          const batch = yield* repo.purgeEventsBefore(before, BATCH)
          purged += batch
          if (batch < BATCH) break
        }
        if (purged > 0) yield* Effect.logDebug(`purged ${purged} events older than ${RETENTION_DAYS} days`)
        return purged
      }).pipe(
        // A failed purge (the database is away) is retried at the next tick.
        Effect.catchCause((cause) => Effect.logWarning("event purge failed", cause))
      )
      yield* Effect.forkScoped(Effect.repeat(purgeOnce, Schedule.spaced(every)))
    })
  )

import { Duration, Effect, Schedule, type Scope } from "effect"

/**
 * Runs `round` every `intervalMillis` in a fiber of the caller's scope (a layer's life): the
 * background work's shared shape (the snoozer, the agents' responder, the page fetcher). A round
 * that fails is logged with `what` and the next one runs as planned.
 */
export const every = (
  what: string,
  intervalMillis: number,
  round: Effect.Effect<unknown>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.asVoid(
    Effect.forkScoped(
      Effect.repeat(
        round.pipe(Effect.catchCause((cause) => Effect.logWarning(`${what} failed`, cause))),
        Schedule.spaced(Duration.millis(intervalMillis))
      )
    )
  )

/**
 * Like `every`, but a round also starts as soon as `wakeups` says there is work (a committed
 * NOTIFY, say): the interval is only the fallback. A round that fails is logged with `what`.
 */
export const woken = (
  what: string,
  intervalMillis: number,
  wakeups: Effect.Effect<Effect.Effect<void>, never, Scope.Scope>,
  round: Effect.Effect<unknown>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const wakeup = yield* wakeups
    const once = round.pipe(Effect.catchCause((cause) => Effect.logWarning(`${what} failed`, cause)))
    yield* Effect.forkScoped(
      Effect.forever(Effect.andThen(once, Effect.raceFirst(wakeup, Effect.sleep(Duration.millis(intervalMillis)))))
    )
  })

import { type Clock, Duration, Effect } from "effect"

/**
 * A wall clock that tests can move forward: real time plus an offset. Unlike
 * `TestClock` it keeps running, so a real server on it behaves normally until
 * a test jumps ahead (say, past the 24 h idempotency retention).
 */
export interface AdjustableClock {
  readonly clock: Clock.Clock
  readonly advance: (duration: Duration.Input) => void
  /** Puts the clock at this instant, back or forward (analytics tests place rows on a calendar); it runs on from there. */
  readonly set: (at: Date) => void
}

export const make = (): AdjustableClock => {
  let offsetMillis = 0
  const millis = () => Date.now() + offsetMillis
  const nanos = () => BigInt(millis()) * 1_000_000n
  const monotonic = () => process.hrtime.bigint()
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: millis,
    currentTimeMillis: Effect.sync(millis),
    currentTimeNanosUnsafe: nanos,
    currentTimeNanos: Effect.sync(nanos),
    monotonicTimeNanosUnsafe: monotonic,
    monotonicTimeNanos: Effect.sync(monotonic),
    sleep: (duration) =>
      Effect.promise(() => new Promise((resolve) => setTimeout(resolve, Duration.toMillis(duration))))
  }
  return {
    clock,
    advance: (duration) => {
      offsetMillis += Duration.toMillis(Duration.fromInputUnsafe(duration))
    },
    set: (at) => {
      offsetMillis = at.getTime() - Date.now()
    }
  }
}

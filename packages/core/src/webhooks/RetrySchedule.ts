import { Duration } from "effect"

/** Retries after 1 s, 2 s and 4 s: four attempts at about 0, 1, 3 and 7 s, then `failed`. */
export const RETRY_DELAYS: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(1),
  Duration.seconds(2),
  Duration.seconds(4)
]

export const MAX_ATTEMPTS = RETRY_DELAYS.length + 1

/** Success is a 2xx within this time. */
export const ATTEMPT_TIMEOUT = Duration.seconds(10)

/** After the `attempt`-th failure (1-based): retry this much later, or give up (undefined). */
export const delayAfterFailure = (attempt: number): Duration.Duration | undefined => RETRY_DELAYS[attempt - 1]

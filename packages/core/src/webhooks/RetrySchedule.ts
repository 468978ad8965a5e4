import { Duration, Schema } from "effect"

/**
 * How an endpoint's failed deliveries are retried (docs/contract.md, "Webhooks"): `seed` (the
 * default, the seed's: after 1, 2 and 4 s, four attempts in about 7 s) or `extended` (Svix's: after
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, eight attempts over about 27.6 hours), for a
 * receiver that may be down for longer than a few seconds.
 */
export const RetryPolicy = Schema.Literals(["seed", "extended"]).annotate({
  identifier: "WebhookRetryPolicy",
  description:
    "seed (default): retries after 1, 2 and 4 s; extended: after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about 27.6 hours)"
})
export type RetryPolicy = typeof RetryPolicy.Type

/** Retries after 1 s, 2 s and 4 s: four attempts at about 0, 1, 3 and 7 s, then `failed`. */
export const RETRY_DELAYS: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(1),
  Duration.seconds(2),
  Duration.seconds(4)
]

/** Svix's schedule: eight attempts, the last about 27.6 hours after the first. */
export const EXTENDED_DELAYS: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(5),
  Duration.hours(10),
  Duration.hours(10)
]

const DELAYS: Record<RetryPolicy, ReadonlyArray<Duration.Duration>> = { seed: RETRY_DELAYS, extended: EXTENDED_DELAYS }

export const MAX_ATTEMPTS = RETRY_DELAYS.length + 1

/** Attempts in one round under the policy, the first included. */
export const attemptsOf = (policy: RetryPolicy): number => DELAYS[policy].length + 1

/** Success is a 2xx within this time. */
export const ATTEMPT_TIMEOUT = Duration.seconds(10)

/** After the `attempt`-th failure (1-based): retry this much later, or give up (undefined). */
export const delayAfterFailure = (attempt: number, policy: RetryPolicy = "seed"): Duration.Duration | undefined =>
  DELAYS[policy][attempt - 1]

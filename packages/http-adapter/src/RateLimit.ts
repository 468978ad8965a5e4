import * as OpsMetrics from "@leadline/core/observability/OpsMetrics"
import { Context, Duration, Effect, Layer, Metric, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { toResponse } from "./ErrorMapping.ts"
import { RateLimited } from "./WireErrors.ts"

export interface RateLimitSettings {
  /** Requests one API key may make per window. */
  readonly limit: number
  readonly window: Duration.Input
}

/** Per-key limits; undefined turns limiting off. */
export const Settings = Context.Reference<RateLimitSettings | undefined>("leadline/RateLimitSettings", {
  defaultValue: () => undefined
})

export type Decision =
  | { readonly _tag: "Allowed"; readonly headers: Record<string, string> }
  | { readonly _tag: "Refused"; readonly response: HttpServerResponse.HttpServerResponse }

const seconds = (duration: Duration.Duration) => String(Math.max(1, Math.ceil(Duration.toMillis(duration) / 1000)))

/**
 * Counts a request of one API key against its fixed window, with Effect's
 * `RateLimiter` (in memory, or in Redis so that every server process shares the
 * count). A store that fails lets the request through: limits protect the
 * service, they should not take it down. `scope` keeps each limit's count apart.
 */
const decider =
  (limiter: RateLimiter.RateLimiter, settings: RateLimitSettings, scope: string, what: string) =>
  (keyId: string): Effect.Effect<Decision> => {
    const window = Duration.fromInputUnsafe(settings.window)
    const windowSeconds = Math.round(Duration.toMillis(window) / 1000)
    return limiter.consume({ algorithm: "fixed-window", window, limit: settings.limit, key: `${scope}:${keyId}` }).pipe(
      Effect.map(
        (result): Decision => ({
          _tag: "Allowed",
          headers: {
            "x-ratelimit-limit": String(result.limit),
            "x-ratelimit-remaining": String(Math.max(0, result.remaining)),
            "x-ratelimit-reset": seconds(result.resetAfter)
          }
        })
      ),
      Effect.catch((error): Effect.Effect<Decision> => {
        const reason = error.reason
        if (reason._tag !== "RateLimitExceeded") {
          const allowed: Decision = { _tag: "Allowed", headers: {} }
          return Effect.as(Effect.logWarning("rate limit store failed; letting the request through", error), allowed)
        }
        const retryAfter = seconds(reason.retryAfter)
        const refused: Decision = {
          _tag: "Refused",
          response: HttpServerResponse.setHeaders(
            toResponse(
              new RateLimited({
                error: `Rate limit exceeded: ${settings.limit} ${what} per ${windowSeconds} s for this API key`
              })
            ),
            {
              "retry-after": retryAfter,
              "x-ratelimit-limit": String(settings.limit),
              "x-ratelimit-remaining": "0",
              "x-ratelimit-reset": retryAfter
            }
          )
        }
        return Effect.as(Metric.update(OpsMetrics.rateLimited, 1), refused)
      })
    )
  }

export const make = Effect.gen(function* () {
  const settings = yield* Settings
  const limiter = yield* Effect.serviceOption(RateLimiter.RateLimiter)
  if (settings === undefined || Option.isNone(limiter)) return undefined
  return decider(limiter.value, settings, "api-key", "requests")
})

/**
 * The AI simulation's own per-key limit (docs/contract-commerce-ai.md §6: 30 a minute unless set), on
 * since each call may cost money: counted in the shared store when there is one, else in memory.
 */
export const SimulationSettings = Context.Reference<RateLimitSettings>("leadline/SimulationRateLimit", {
  defaultValue: () => ({ limit: 30, window: "1 minute" })
})

export const makeSimulation = Effect.gen(function* () {
  const settings = yield* SimulationSettings
  const shared = yield* Effect.serviceOption(RateLimiter.RateLimiter)
  const limiter = Option.isSome(shared)
    ? shared.value
    : yield* RateLimiter.make.pipe(Effect.provide(RateLimiter.layerStoreMemory))
  return decider(limiter, settings, "ai-simulate", "simulations")
})

/** Limits in this process's memory: right for one server process. */
export const layerMemory = (settings: RateLimitSettings) =>
  Layer.mergeAll(RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)), Layer.succeed(Settings, settings))

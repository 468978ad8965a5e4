import { Context, Duration, Effect, Layer, Option } from "effect"
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
 * service, they should not take it down.
 */
export const make = Effect.gen(function* () {
  const settings = yield* Settings
  const limiter = yield* Effect.serviceOption(RateLimiter.RateLimiter)
  if (settings === undefined || Option.isNone(limiter)) return undefined
  const window = Duration.fromInputUnsafe(settings.window)
  const windowSeconds = Math.round(Duration.toMillis(window) / 1000)
  return (keyId: string): Effect.Effect<Decision> =>
    limiter.value.consume({ algorithm: "fixed-window", window, limit: settings.limit, key: `api-key:${keyId}` }).pipe(
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
      Effect.catch((error) => {
        const reason = error.reason
        if (reason._tag !== "RateLimitExceeded") {
          return Effect.as(Effect.logWarning("rate limit store failed; letting the request through", error), {
            _tag: "Allowed" as const,
            headers: {}
          })
        }
        const retryAfter = seconds(reason.retryAfter)
        return Effect.succeed<Decision>({
          _tag: "Refused",
          response: HttpServerResponse.setHeaders(
            toResponse(
              new RateLimited({
                error: `Rate limit exceeded: ${settings.limit} requests per ${windowSeconds} s for this API key`
              })
            ),
            {
              "retry-after": retryAfter,
              "x-ratelimit-limit": String(settings.limit),
              "x-ratelimit-remaining": "0",
              "x-ratelimit-reset": retryAfter
            }
          )
        })
      })
    )
})

/** Limits in this process's memory: right for one server process. */
export const layerMemory = (settings: RateLimitSettings) =>
  Layer.mergeAll(RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)), Layer.succeed(Settings, settings))

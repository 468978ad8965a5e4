import { Effect, Layer, Redacted } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import * as RateLimit from "@leadline/http-adapter/RateLimit"
import type { ServerConfig } from "./Config.ts"

/**
 * Per-key rate limits as configured: off when `LEADLINE_RATE_LIMIT=0`; counted in
 * Redis when `REDIS_URL` is set, so every server process shares one count per key;
 * otherwise in this process's memory.
 */
export const layer = (config: ServerConfig) => {
  if (config.rateLimit <= 0) return Layer.empty
  const settings = { limit: config.rateLimit, window: `${config.rateLimitWindowSeconds} seconds` as const }
  if (config.redisUrl._tag === "None") return RateLimit.layerMemory(settings)
  const url = Redacted.value(config.redisUrl.value)
  return Layer.mergeAll(
    RateLimiter.layer.pipe(
      Layer.provide(RateLimiter.layerStoreRedis({ prefix: "leadline:ratelimit:" })),
      // While Redis is away a command fails at once instead of queueing until it returns:
      // the request then goes through uncounted rather than waiting.
      // Loaded only when Redis is configured: its client costs about 100 ms of every start otherwise.
      Layer.provide(
        Layer.unwrap(
          Effect.promise(() => import("@effect/platform-node/NodeRedis")).pipe(
            Effect.map((NodeRedis) => NodeRedis.layer({ url, disableOfflineQueue: true }))
          )
        )
      )
    ),
    Layer.succeed(RateLimit.Settings, settings)
  )
}

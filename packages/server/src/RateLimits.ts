import { Effect, Layer, Redacted } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import * as RateLimit from "@leadline/http-adapter/RateLimit"
import type { ServerConfig } from "./Config.ts"

/**
 * The rate limits as configured: per API key (off when `LEADLINE_RATE_LIMIT=0`) and the WhatsApp
 * webhook's refusals per source (off when `WHATSAPP_WEBHOOK_RATE_LIMIT=0`), counted in Redis when
 * `REDIS_URL` is set, so every server process shares one count; otherwise in this process's memory
 * (the AI simulation's limit too).
 */
export const layer = (config: ServerConfig) => {
  const settings = Layer.mergeAll(
    config.rateLimit <= 0
      ? Layer.empty
      : Layer.succeed(RateLimit.Settings, {
          limit: config.rateLimit,
          window: `${config.rateLimitWindowSeconds} seconds` as const
        }),
    config.whatsappWebhookRateLimit <= 0
      ? Layer.empty
      : Layer.succeed(RateLimit.SourceSettings, { limit: config.whatsappWebhookRateLimit, window: "1 minute" })
  )
  if (config.redisUrl._tag === "None") {
    return Layer.merge(RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)), settings)
  }
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
    settings
  )
}

import * as OpsMetrics from "@leadline/core/observability/OpsMetrics"
import { Context, Duration, Effect, Layer, Metric, Option, Result } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import * as IpNetwork from "effect/net/IpNetwork"
import * as NetAddress from "effect/net/NetAddress"
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

const windowSeconds = (settings: RateLimitSettings) =>
  Math.round(Duration.toMillis(Duration.fromInputUnsafe(settings.window)) / 1000)

/** 429 `rate_limited` with `Retry-After` and the `X-RateLimit-*` headers, counted in the metrics. */
const limited = (settings: RateLimitSettings, retryAfter: Duration.Duration, error: string) => {
  const after = seconds(retryAfter)
  return Effect.as(
    Metric.update(OpsMetrics.rateLimited, 1),
    HttpServerResponse.setHeaders(toResponse(new RateLimited({ error })), {
      "retry-after": after,
      "x-ratelimit-limit": String(settings.limit),
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": after
    })
  )
}

const storeFailed = (error: RateLimiter.RateLimiterError) =>
  Effect.logWarning("rate limit store failed; letting the request through", error)

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
          return Effect.as(storeFailed(error), allowed)
        }
        return Effect.map(
          limited(
            settings,
            reason.retryAfter,
            `Rate limit exceeded: ${settings.limit} ${what} per ${windowSeconds(settings)} s for this API key`
          ),
          (response): Decision => ({ _tag: "Refused", response })
        )
      })
    )
  }

export const make = Effect.gen(function* () {
  const settings = yield* Settings
  const limiter = yield* Effect.serviceOption(RateLimiter.RateLimiter)
  if (settings === undefined || Option.isNone(limiter)) return undefined
  return decider(limiter.value, settings, "api-key", "requests")
})

/** The limiter the server shares (Redis when configured), else one in this process's memory. */
const sharedOrMemory = Effect.gen(function* () {
  const shared = yield* Effect.serviceOption(RateLimiter.RateLimiter)
  return Option.isSome(shared)
    ? shared.value
    : yield* RateLimiter.make.pipe(Effect.provide(RateLimiter.layerStoreMemory))
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
  return decider(yield* sharedOrMemory, settings, "ai-simulate", "simulations")
})

/**
 * The WhatsApp webhook's budget of refused requests per source (docs/contract-messaging.md §6.1,
 * `WHATSAPP_WEBHOOK_RATE_LIMIT`): undefined turns it off.
 */
export const SourceSettings = Context.Reference<RateLimitSettings | undefined>("leadline/SourceRateLimit", {
  defaultValue: () => undefined
})

/**
 * Where a request comes from, for a per-source count: its client address (the socket's peer, or
 * what trusted proxies forwarded: `Server.Options.trustedProxies`), an IPv6 one by its /64, which
 * one host usually holds whole.
 */
export const sourceOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const address = Option.getOrUndefined(request.remoteAddress)
  if (address === undefined) return "unknown"
  const parsed = NetAddress.ipFromString(address)
  if (Result.isFailure(parsed)) return address
  const canonical = NetAddress.toCanonical(parsed.success)
  if (NetAddress.width(canonical) === 32) return NetAddress.formatIp(canonical)
  return IpNetwork.format(IpNetwork.fromAddressUnsafe(canonical, 64))
}

/**
 * The webhook's refusal budget as `SourceSettings` say (the shape the WhatsApp route takes as its
 * `RefusalBudget`: checked before a request is read, spent by each refusal), counted in the shared limiter (or in
 * memory): only refusals spend it, so a source that sends nothing wrong is never limited, however
 * much it sends. Checking and spending are two steps: requests of one source in flight together
 * may each spend past the limit. A store that fails lets requests through, as for API keys.
 */
export const refusalBudget = Effect.gen(function* () {
  const settings = yield* SourceSettings
  if (settings === undefined) return undefined
  const limiter = yield* sharedOrMemory
  const window = Duration.fromInputUnsafe(settings.window)
  const counted = (request: HttpServerRequest.HttpServerRequest, tokens: number) =>
    limiter.consume({
      algorithm: "fixed-window",
      window,
      limit: settings.limit,
      key: `webhook-source:${sourceOf(request)}`,
      tokens
    })
  return {
    check: HttpServerRequest.HttpServerRequest.pipe(
      // No token taken: the budget's state as it is.
      Effect.flatMap((request) => counted(request, 0)),
      Effect.flatMap((result) =>
        result.remaining > 0
          ? Effect.undefined
          : limited(
              settings,
              result.resetAfter,
              `Too many refused requests from this address: ${settings.limit} per ${windowSeconds(settings)} s`
            )
      ),
      Effect.catch((error) => Effect.as(storeFailed(error), undefined))
    ),
    spend: HttpServerRequest.HttpServerRequest.pipe(
      Effect.flatMap((request) => counted(request, 1)),
      Effect.asVoid,
      // Past the limit already (a request in flight beside others): nothing more to count.
      Effect.catch((error) => (error.reason._tag === "RateLimitExceeded" ? Effect.void : storeFailed(error)))
    )
  }
})

/** Limits in this process's memory: right for one server process. */
export const layerMemory = (settings: RateLimitSettings) =>
  Layer.mergeAll(RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)), Layer.succeed(Settings, settings))

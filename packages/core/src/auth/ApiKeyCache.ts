import { Context, Duration, Effect, Layer } from "effect"
import type { ApiKeyGrant } from "./ApiKey.ts"
import { ApiKeyChanges } from "./ApiKeyChanges.ts"

/** How long a verified key is trusted without the store; a missed change notification costs at most this. */
export const TIME_TO_LIVE = Duration.seconds(10)
/** Entries kept at most; past it the cache starts again empty rather than tracking use. */
export const MAX_ENTRIES = 10_000

/**
 * Verified keys of this process, by the key's hash: authentication reads the store
 * once per key per `TIME_TO_LIVE` rather than on every request. Emptied at once by
 * `clear` (a change made through this process) and on every `ApiKeyChanges` signal
 * (a change made anywhere). Unknown keys are not kept, so guessing fills nothing.
 */
export class ApiKeyCache extends Context.Service<
  ApiKeyCache,
  {
    /** The grant for `hash`: kept, or read with `load` and kept. */
    readonly lookup: (
      hash: string,
      load: Effect.Effect<ApiKeyGrant | undefined>
    ) => Effect.Effect<ApiKeyGrant | undefined>
    readonly clear: Effect.Effect<void>
  }
>()("core/ApiKeyCache") {
  static readonly layer = Layer.effect(
    ApiKeyCache,
    Effect.gen(function* () {
      const ttl = Duration.toMillis(TIME_TO_LIVE)
      const entries = new Map<string, { readonly grant: ApiKeyGrant; readonly expiresAt: number }>()
      // A read that began before a clear must not put back what the clear removed.
      let generation = 0
      const clear = Effect.sync(() => {
        generation++
        entries.clear()
      })

      // Written without a generator: it runs on every authenticated request.
      const lookup = (hash: string, load: Effect.Effect<ApiKeyGrant | undefined>) =>
        Effect.clockWith((clock) => {
          const now = clock.currentTimeMillisUnsafe()
          const hit = entries.get(hash)
          if (hit !== undefined && hit.expiresAt > now) return Effect.succeed<ApiKeyGrant | undefined>(hit.grant)
          const started = generation
          return Effect.map(load, (grant) => {
            if (grant !== undefined && generation === started) {
              if (entries.size >= MAX_ENTRIES) entries.clear()
              entries.set(hash, { grant, expiresAt: now + ttl })
            }
            return grant
          })
        })

      const changes = yield* ApiKeyChanges
      const next = yield* changes.changes
      yield* Effect.forkScoped(Effect.forever(Effect.andThen(next, clear)))

      return ApiKeyCache.of({ lookup, clear })
    })
  )
}

import { Context, Effect, Layer } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import { Transactor } from "../Transactor.ts"
import * as PlatformEvents from "../events/PlatformEvents.ts"
import type { EndpointRecord } from "./Webhook.ts"
import { WebhooksRepo } from "./WebhooksRepo.ts"

/**
 * Endpoints that keep failing are disabled (docs/contract.md, "Webhooks"): one that has failed every
 * attempt for `failingForMillis` is disabled after its next failure, its pending deliveries paused, and
 * `webhook_endpoint.disabled` recorded in the same transaction (for the account's other endpoints,
 * its event log and its stream). `PATCH … {"enabled": true}` brings it back.
 */
export class EndpointHealth extends Context.Service<
  EndpointHealth,
  {
    /** After a failed attempt to the endpoint: disables it when it has been failing long enough. */
    readonly afterFailure: (
      accountId: string,
      endpointId: string,
      now: number,
      failingForMillis: number
    ) => Effect.Effect<EndpointRecord | undefined>
  }
>()("core/EndpointHealth") {
  static readonly layer = Layer.effect(
    EndpointHealth,
    Effect.gen(function* () {
      const repo = yield* WebhooksRepo
      const outbox = yield* Outbox
      const transactor = yield* Transactor
      return EndpointHealth.of({
        afterFailure: (accountId, endpointId, now, failingForMillis) =>
          transactor.withTransaction(
            Effect.gen(function* () {
              const at = new Date(now).toISOString()
              const disabled = yield* repo.disableFailing(
                accountId,
                endpointId,
                new Date(now - failingForMillis).toISOString(),
                at
              )
              if (disabled === undefined) return undefined
              yield* emit(PlatformEvents.endpointDisabled, {
                id: disabled.id,
                url: disabled.url,
                enabled: false,
                failing_since: disabled.failingSince ?? at,
                disabled_at: at
              }).pipe(
                Effect.provideService(Outbox, outbox),
                Effect.provideService(CurrentPrincipal, systemPrincipal(disabled.accountId, "webhooks"))
              )
              return disabled
            })
          )
      })
    })
  )
}

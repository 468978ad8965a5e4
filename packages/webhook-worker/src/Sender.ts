import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { isIpLiteral, isPublicAddress } from "@leadline/core/outbound/Addresses"
import type { ClaimedDelivery } from "@leadline/core/webhooks/DeliveryQueue"
import { ATTEMPT_TIMEOUT } from "@leadline/core/webhooks/RetrySchedule"
import * as Signature from "@leadline/core/webhooks/Signature"
import * as GuardedLookup from "./GuardedLookup.ts"

export interface SendOutcome {
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: string | null
}

/** The headers of one attempt: the seed's, ours, and the Standard Webhooks ones. */
export const headersFor = async (delivery: ClaimedDelivery, unixSeconds: number): Promise<Record<string, string>> => ({
  "content-type": "application/json",
  "user-agent": "Leadline-Webhooks/0.1",
  "x-service-event": delivery.eventType,
  "x-service-signature": await Signature.sign(delivery.secret, delivery.body),
  "x-service-timestamp": String(unixSeconds),
  "x-service-event-id": delivery.eventId,
  "x-service-delivery-attempt": String(delivery.attempt),
  "webhook-id": delivery.eventId,
  "webhook-timestamp": String(unixSeconds),
  // During a rotation's overlap, one signature per secret (the Standard Webhooks header takes
  // several, space-separated): a receiver still on the old secret keeps verifying.
  "webhook-signature": [
    await Signature.signStandard(delivery.secret, delivery.eventId, unixSeconds, delivery.body),
    ...(delivery.previousSecret === null
      ? []
      : [await Signature.signStandard(delivery.previousSecret, delivery.eventId, unixSeconds, delivery.body)])
  ].join(" ")
})

const describe = (error: unknown): string => {
  let current: unknown = error
  // The root cause (refused address, ECONNREFUSED, a reset) says most; wrappers only add noise.
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null && "cause" in current; depth++) {
    if ((current as { cause: unknown }).cause === undefined) break
    current = (current as { cause: unknown }).cause
  }
  const message = current instanceof Error ? current.message : String(current)
  return message.length > 500 ? `${message.slice(0, 500)}…` : message
}

/** Sends one attempt: a POST that succeeds on 2xx within 10 s. Never fails: the outcome says what happened. */
export class Sender extends Context.Service<
  Sender,
  { readonly send: (delivery: ClaimedDelivery) => Effect.Effect<SendOutcome> }
>()("webhook-worker/Sender") {
  static readonly layer = (options: { readonly allowPrivate: boolean }) =>
    Layer.unwrap(
      Effect.map(GuardedLookup.Resolver, (resolver) =>
        Layer.effect(Sender, make(options)).pipe(
          Layer.provide(
            NodeHttpClient.layerUndiciOptions({
              connect: { lookup: GuardedLookup.make(resolver, options) },
              headersTimeout: Duration.toMillis(ATTEMPT_TIMEOUT),
              bodyTimeout: Duration.toMillis(ATTEMPT_TIMEOUT)
            })
          )
        )
      )
    )
}

const make = (options: { readonly allowPrivate: boolean }) =>
  Effect.gen(function* () {
    // Redirects are not followed: Effect's client only follows them when asked to.
    const client = yield* HttpClient.HttpClient
    const send = (delivery: ClaimedDelivery) =>
      Effect.gen(function* () {
        const started = yield* Clock.currentTimeMillis
        const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - started)
        // An IP literal never goes through `lookup`, so it is checked here.
        const host = new URL(delivery.url).hostname
        if (!options.allowPrivate && isIpLiteral(host) && !isPublicAddress(host)) {
          return { statusCode: null, durationMs: 0, error: `refused: ${host} is a private or internal address` }
        }
        const headers = yield* Effect.promise(() => headersFor(delivery, Math.floor(started / 1000)))
        const request = HttpClientRequest.post(delivery.url).pipe(
          HttpClientRequest.setHeaders(headers),
          HttpClientRequest.bodyText(delivery.body, "application/json")
        )
        return yield* client.execute(request).pipe(
          // The status is all we need: the response body is dropped unread with the scope.
          Effect.map((response) => response.status),
          Effect.scoped,
          Effect.timeout(ATTEMPT_TIMEOUT),
          Effect.matchEffect({
            onSuccess: (statusCode) =>
              Effect.map(elapsed, (durationMs) => ({
                statusCode,
                durationMs,
                error: statusCode >= 200 && statusCode < 300 ? null : `HTTP ${statusCode}`
              })),
            onFailure: (error) =>
              Effect.map(elapsed, (durationMs) => ({
                statusCode: null,
                durationMs,
                error: error._tag === "TimeoutError" ? "timed out after 10 s" : describe(error)
              }))
          })
        )
      })
    return Sender.of({ send })
  })

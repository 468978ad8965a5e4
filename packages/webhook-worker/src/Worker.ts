import * as Tracing from "@leadline/core/Tracing"
import * as OpsMetrics from "@leadline/core/observability/OpsMetrics"
import { hostname } from "node:os"
import { Cause, Clock, type Context, Duration, Effect, Layer, Queue, Scope } from "effect"
import * as Ids from "@leadline/core/Ids"
import { type ClaimedDelivery, DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import { EndpointHealth } from "@leadline/core/webhooks/EndpointHealth"
import { delayAfterFailure } from "@leadline/core/webhooks/RetrySchedule"
import { type SendOutcome, Sender } from "./Sender.ts"

const BATCH_WINDOW = Duration.millis(5)

/** The operator's label of an attempt (docs/observability.md §B2), from what the sender saw. */
const outcomeOf = (outcome: SendOutcome): OpsMetrics.WebhookOutcome =>
  outcome.statusCode === null
    ? outcome.error?.startsWith("refused:")
      ? "blocked"
      : outcome.error?.startsWith("timed out")
        ? "timeout"
        : "network"
    : outcome.statusCode >= 200 && outcome.statusCode < 300
      ? "success"
      : outcome.statusCode >= 500
        ? "http_5xx"
        : "http_4xx"

export interface Options {
  /** Attempts in flight at once; a hung receiver holds one slot, not the worker. */
  readonly concurrency?: number | undefined
  /** How often to look for due work when no wake-up arrives. */
  readonly pollInterval?: Duration.Input | undefined
  /** How long a claim is held; must outlast an attempt (10 s) with room to record it. */
  readonly lease?: Duration.Input | undefined
  /** Names this worker in leases; host, process and a random part by default. */
  readonly id?: string | undefined
  /**
   * An endpoint that has failed every attempt for this long is disabled (5 days, as Svix; 0 never
   * disables one).
   */
  readonly disableAfter?: Duration.Input | undefined
}

/**
 * The delivery worker: claims due deliveries under a lease, sends each with
 * bounded concurrency, records every attempt, and schedules the retries. It
 * wakes when an event commits (LISTEN/NOTIFY, or the memory PubSub) and polls
 * only as a fallback. Runs in the layer's scope until it closes.
 */
export const layer = (options: Options = {}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const queue = yield* DeliveryQueue
      const sender = yield* Sender
      const scope = yield* Scope.Scope
      const concurrency = options.concurrency ?? 32
      const pollMillis = Duration.toMillis(Duration.fromInputUnsafe(options.pollInterval ?? "1 second"))
      const leaseMillis = Duration.toMillis(Duration.fromInputUnsafe(options.lease ?? "30 seconds"))
      const worker = options.id ?? `${hostname()}:${process.pid}:${yield* Ids.make("wkr")}`
      const health = yield* EndpointHealth
      const disableAfterMillis = Duration.toMillis(Duration.fromInputUnsafe(options.disableAfter ?? "5 days"))

      // Anything worth a look: new work signalled, a slot freed, a wake-up from the database.
      const kick = yield* Queue.sliding<void>(1)
      const poke = Queue.offer(kick, undefined)
      const nextWakeup = yield* queue.wakeups
      yield* Effect.forkIn(Effect.forever(Effect.andThen(nextWakeup, poke)), scope)

      let inFlight = 0
      const context = (yield* Effect.context<never>()) as Context.Context<never>

      const attempt = (delivery: ClaimedDelivery) =>
        Effect.gen(function* () {
          const attemptedAt = yield* Clock.currentTimeMillis
          OpsMetrics.deliveryLag.updateUnsafe(Math.max(0, attemptedAt - delivery.dueAt) / 1000, context)
          const outcome = yield* sender.send(delivery).pipe(Tracing.span("Webhook.attempt"))
          const succeeded = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300
          const delay = succeeded ? undefined : delayAfterFailure(delivery.attempt, delivery.retryPolicy)
          const next = succeeded
            ? ({ _tag: "Delivered" } as const)
            : delay === undefined
              ? ({ _tag: "Failed" } as const)
              : ({ _tag: "RetryAt", at: attemptedAt + outcome.durationMs + Duration.toMillis(delay) } as const)
          yield* queue.record(worker, {
            accountId: delivery.accountId,
            deliveryId: delivery.id,
            attempt: delivery.attempt,
            attemptedAt,
            statusCode: outcome.statusCode,
            durationMs: outcome.durationMs,
            error: outcome.error,
            next
          })
          if (!succeeded && disableAfterMillis > 0) {
            const disabled = yield* health.afterFailure(
              delivery.accountId,
              delivery.endpointId,
              attemptedAt,
              disableAfterMillis
            )
            if (disabled !== undefined) {
              yield* Effect.logWarning(
                `webhook endpoint ${disabled.id} disabled: every attempt failed since ${disabled.failingSince}`
              )
            }
          }
          // Counted once recorded, so a scrape never sees an attempt the queue does not.
          const kind = outcomeOf(outcome)
          OpsMetrics.webhookAttempts[kind].updateUnsafe(1, context)
          OpsMetrics.webhookAttemptDuration[kind].updateUnsafe(outcome.durationMs / 1000, context)
          if (next._tag !== "RetryAt")
            OpsMetrics.deliveriesFinished[next._tag === "Delivered" ? "delivered" : "failed"].updateUnsafe(1, context)
        }).pipe(
          // An unrecorded attempt (the database was away) is retried when the lease ends.
          Effect.catchCause((cause) => Effect.logWarning(`could not record an attempt of ${delivery.id}`, cause)),
          Effect.ensuring(
            Effect.andThen(
              Effect.sync(() => inFlight--),
              poke
            )
          )
        )

      /**
       * Claims what is due and free slots allow: "more" when there may be more due right
       * now, "full" when every slot is taken, "idle" when nothing more is due.
       */
      const dispatch = Effect.gen(function* () {
        const free = concurrency - inFlight
        if (free <= 0) return "full" as const
        const now = yield* Clock.currentTimeMillis
        const claimed = yield* queue.claim(worker, now, leaseMillis, free)
        for (const delivery of claimed) {
          inFlight++
          yield* Effect.forkIn(attempt(delivery), scope)
        }
        return claimed.length === free ? ("more" as const) : ("idle" as const)
      })

      const waitForWork = Effect.gen(function* () {
        const next = yield* queue.nextDueAt
        const now = yield* Clock.currentTimeMillis
        const wait = next === undefined ? pollMillis : Math.min(pollMillis, Math.max(10, next - now))
        yield* Effect.timeoutOption(Queue.take(kick), Duration.millis(wait))
      })

      // With every slot taken, a due backlog is no reason to look again: only a finished
      // attempt (or a wake-up) can change anything, and every attempt pokes when it ends.
      // A few milliseconds more let other attempts finish too, so that one claim fills
      // several slots rather than one claim (a round trip) per delivery.
      const waitForSlot = Effect.andThen(Queue.take(kick), Effect.sleep(BATCH_WINDOW))

      const step = Effect.flatMap(dispatch, (state) =>
        state === "more" ? Effect.void : state === "full" ? waitForSlot : waitForWork
      ).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.andThen(
                Effect.logWarning("webhook worker: retrying after an error", cause),
                Effect.sleep("1 second")
              )
        )
      )
      yield* Effect.forkIn(Effect.forever(step), scope)
      yield* Effect.logDebug(`webhook worker ${worker} started (concurrency ${concurrency})`)
    })
  )

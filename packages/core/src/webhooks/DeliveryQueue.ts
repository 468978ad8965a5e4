import type { Backlog } from "../observability/Backlog.ts"
import { Context, type Effect, type Scope } from "effect"
import type { RetryPolicy } from "./RetrySchedule.ts"

/** A delivery a worker holds under a lease, with what it needs to send it. */
export interface ClaimedDelivery {
  readonly id: string
  readonly eventId: string
  readonly eventType: string
  /** The event envelope as JSON text: the exact bytes to send. */
  readonly body: string
  readonly url: string
  readonly secret: string
  /** The secret before a rotation, while its overlap lasts: deliveries are signed with both. */
  readonly previousSecret: string | null
  readonly endpointId: string
  readonly accountId: string
  /** 1-based number of this attempt in the current round. */
  readonly attempt: number
  /** When it fell due (epoch ms): its claim's lag behind that is an operator's metric. */
  readonly dueAt: number
  /** Its endpoint's schedule of retries. */
  readonly retryPolicy: RetryPolicy
}

export interface AttemptRecord {
  /** The delivery's account: its key is the account and the id (docs/scaling.md). */
  readonly accountId: string
  readonly deliveryId: string
  readonly attempt: number
  readonly attemptedAt: number
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: string | null
  /** What happens next: done, retry at (epoch ms), or give up. */
  readonly next:
    | { readonly _tag: "Delivered" }
    | { readonly _tag: "RetryAt"; readonly at: number }
    | { readonly _tag: "Failed" }
}

/**
 * The worker's side of the outbox. `claim` hands out due deliveries under a
 * lease so that two workers never hold the same one; a crashed worker's
 * claims become due again when their lease ends.
 */
export class DeliveryQueue extends Context.Service<
  DeliveryQueue,
  {
    readonly claim: (
      worker: string,
      now: number,
      leaseMillis: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
    /** Records the attempt; ignored when the worker's lease on it was lost meanwhile. */
    readonly record: (worker: string, attempt: AttemptRecord) => Effect.Effect<void>
    /** The pending deliveries due at `now` (epoch ms), for the operator's gauges. */
    readonly backlog: (now: number) => Effect.Effect<Backlog>
    /** When the next pending delivery falls due (epoch ms), if any. */
    readonly nextDueAt: Effect.Effect<number | undefined>
    /**
     * Signals new work (a committed event with deliveries, a redelivery): an
     * effect that waits for the next signal. Workers also poll, so a missed
     * signal only delays.
     */
    readonly wakeups: Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  }
>()("core/DeliveryQueue") {}

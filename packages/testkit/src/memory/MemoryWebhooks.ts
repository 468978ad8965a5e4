import { Clock, Context, Effect, Layer, PubSub } from "effect"
import type { Envelope } from "@leadline/core/events/Event"
import type { EventType } from "@leadline/core/EventCatalog"
import { Outbox } from "@leadline/core/events/Outbox"
import * as Ids from "@leadline/core/Ids"
import { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import type { Attempt, Delivery, DeliveryStatus, EndpointRecord } from "@leadline/core/webhooks/Webhook"
import { WebhooksRepo } from "@leadline/core/webhooks/WebhooksRepo"
import { onCommit, onRollback } from "./MemoryTransaction.ts"

/** Read access to the events the memory outbox holds, for tests and fixtures. */
export class RecordedEvents extends Context.Service<
  RecordedEvents,
  { readonly all: Effect.Effect<ReadonlyArray<Envelope>> }
>()("testkit/RecordedEvents") {}

interface StoredEndpoint extends EndpointRecord {
  deletedAt: string | null
}

interface StoredDelivery {
  readonly id: string
  readonly accountId: string
  readonly eventId: string
  readonly eventType: EventType
  readonly endpointId: string
  readonly createdAt: string
  status: DeliveryStatus
  roundAttempts: number
  nextAttemptAt: number | null
  leaseUntil: number
  leaseOwner: string | null
  updatedAt: string
  readonly attempts: Array<Attempt>
}

const iso = (millis: number) => new Date(millis).toISOString()

const view = (delivery: StoredDelivery): Delivery => ({
  id: delivery.id,
  event_id: delivery.eventId,
  event_type: delivery.eventType,
  endpoint_id: delivery.endpointId,
  status: delivery.status,
  attempts: [...delivery.attempts],
  next_attempt_at: delivery.nextAttemptAt === null ? null : iso(delivery.nextAttemptAt),
  created_at: delivery.createdAt,
  updated_at: delivery.updatedAt
})

/**
 * The outbox, webhook endpoints, the delivery log and the worker's queue in
 * memory. They share state as their tables would: an event fans out to the
 * endpoints subscribed at that moment, and the worker is woken after commit.
 */
export const layer = Layer.effectContext(
  Effect.gen(function* () {
    const events = new Map<string, Envelope>()
    const endpoints: Array<StoredEndpoint> = [] // newest first
    const deliveries: Array<StoredDelivery> = [] // newest first
    const wake = yield* PubSub.sliding<void>(1)
    const signal = () => Effect.runFork(PubSub.publish(wake, undefined))

    const outbox = Outbox.of({
      append: (event) =>
        Effect.gen(function* () {
          events.set(event.id, event)
          yield* onRollback(() => events.delete(event.id))
          const now = yield* Clock.currentTimeMillis
          const queued: Array<StoredDelivery> = []
          for (const endpoint of endpoints) {
            if (endpoint.accountId !== event.account_id || endpoint.deletedAt !== null || !endpoint.enabled) continue
            if (!endpoint.events.some((type) => type === event.type)) continue
            queued.push({
              id: yield* Ids.make("dlv"),
              accountId: event.account_id,
              eventId: event.id,
              // The outbox takes only the catalog's types (Outbox.emit is typed by definition).
              eventType: event.type as EventType,
              endpointId: endpoint.id,
              createdAt: event.created_at,
              status: "pending",
              roundAttempts: 0,
              nextAttemptAt: now,
              leaseUntil: 0,
              leaseOwner: null,
              updatedAt: event.created_at,
              attempts: []
            })
          }
          // Queued only once the transaction commits, as rows are on SQL: a worker must never
          // claim the delivery of a change that is then rolled back.
          yield* onCommit(() => {
            for (const delivery of queued) deliveries.unshift(delivery)
            signal()
          })
        })
    })

    const repo = WebhooksRepo.of({
      insertEndpoint: (endpoint) =>
        Effect.andThen(
          Effect.sync(() => endpoints.unshift({ ...endpoint, deletedAt: null })),
          onRollback(() => endpoints.shift())
        ),
      listEndpoints: (accountId, page) =>
        Effect.sync(() => {
          const mine = endpoints.filter((e) => e.accountId === accountId && e.deletedAt === null)
          return { items: mine.slice(page.offset, page.offset + page.limit), total: mine.length }
        }),
      deleteEndpoint: (accountId, id, at) =>
        Effect.sync(() => {
          const endpoint = endpoints.find((e) => e.id === id && e.accountId === accountId && e.deletedAt === null)
          if (endpoint === undefined) return false
          endpoint.deletedAt = at
          for (const delivery of deliveries) {
            if (delivery.endpointId === id && delivery.status === "pending") {
              delivery.status = "cancelled"
              delivery.nextAttemptAt = null
              delivery.updatedAt = at
            }
          }
          return true
        }),
      listDeliveries: (accountId, filter, page) =>
        Effect.sync(() => {
          const mine = deliveries.filter(
            (d) =>
              d.accountId === accountId &&
              (filter.endpointId === undefined || d.endpointId === filter.endpointId) &&
              (filter.status === undefined || d.status === filter.status)
          )
          return { items: mine.slice(page.offset, page.offset + page.limit).map(view), total: mine.length }
        }),
      findDelivery: (accountId, id) =>
        Effect.sync(() => {
          const delivery = deliveries.find((d) => d.id === id && d.accountId === accountId)
          return delivery === undefined ? undefined : view(delivery)
        }),
      redeliver: (accountId, id, at) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const delivery = deliveries.find((d) => d.id === id && d.accountId === accountId)
          if (delivery === undefined) return undefined
          if (endpoints.find((e) => e.id === delivery.endpointId)?.deletedAt !== null) return "gone" as const
          if (delivery.status !== "pending") {
            delivery.status = "pending"
            delivery.roundAttempts = 0
            delivery.nextAttemptAt = now
            delivery.updatedAt = at
            signal()
          }
          return view(delivery)
        })
    })

    const queue = DeliveryQueue.of({
      claim: (worker, now, leaseMillis, limit) =>
        Effect.sync(() => {
          const due = deliveries
            .filter(
              (d) => d.status === "pending" && d.nextAttemptAt !== null && d.nextAttemptAt <= now && d.leaseUntil <= now
            )
            .sort((a, b) => a.nextAttemptAt! - b.nextAttemptAt!)
            .slice(0, limit)
          return due.map((delivery) => {
            delivery.leaseUntil = now + leaseMillis
            delivery.leaseOwner = worker
            const endpoint = endpoints.find((e) => e.id === delivery.endpointId)!
            return {
              id: delivery.id,
              eventId: delivery.eventId,
              eventType: delivery.eventType,
              body: JSON.stringify(events.get(delivery.eventId)),
              url: endpoint.url,
              secret: endpoint.secret,
              attempt: delivery.roundAttempts + 1
            }
          })
        }),
      record: (worker, attempt) =>
        Effect.sync(() => {
          const delivery = deliveries.find((d) => d.id === attempt.deliveryId)
          if (delivery === undefined || delivery.leaseOwner !== worker || delivery.status !== "pending") return
          delivery.attempts.push({
            number: delivery.attempts.length + 1,
            attempted_at: iso(attempt.attemptedAt),
            status_code: attempt.statusCode,
            duration_ms: attempt.durationMs,
            error: attempt.error
          })
          delivery.leaseOwner = null
          delivery.leaseUntil = 0
          delivery.updatedAt = iso(attempt.attemptedAt + attempt.durationMs)
          delivery.roundAttempts++
          switch (attempt.next._tag) {
            case "Delivered":
              delivery.status = "delivered"
              delivery.nextAttemptAt = null
              break
            case "Failed":
              delivery.status = "failed"
              delivery.nextAttemptAt = null
              break
            case "RetryAt":
              delivery.nextAttemptAt = attempt.next.at
          }
        }),
      nextDueAt: Effect.sync(() => {
        // A leased delivery is due again only when its lease ends.
        let next: number | undefined
        for (const d of deliveries) {
          if (d.status !== "pending" || d.nextAttemptAt === null) continue
          const due = Math.max(d.nextAttemptAt, d.leaseUntil)
          if (next === undefined || due < next) next = due
        }
        return next
      }),
      wakeups: Effect.map(PubSub.subscribe(wake), (subscription) => Effect.asVoid(PubSub.take(subscription)))
    })

    return Context.make(Outbox, outbox).pipe(
      Context.add(WebhooksRepo, repo),
      Context.add(DeliveryQueue, queue),
      Context.add(RecordedEvents, { all: Effect.sync(() => [...events.values()]) })
    )
  })
)

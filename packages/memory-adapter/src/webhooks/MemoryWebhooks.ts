import { Clock, Context, Effect, Layer, PubSub } from "effect"
import type { EventType } from "@leadline/core/EventCatalog"
import { type Envelope, orderingKeyOf } from "@leadline/core/events/Event"
import { EventFeed } from "@leadline/core/eventlog/EventFeed"
import { EventLog } from "@leadline/core/eventlog/EventLog"
import * as Events from "@leadline/core/eventlog/Events"
import { Outbox } from "@leadline/core/events/Outbox"
import * as Ids from "@leadline/core/Ids"
import { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import type { Attempt, Delivery, DeliveryStatus, EndpointRecord } from "@leadline/core/webhooks/Webhook"
import { WebhooksRepo } from "@leadline/core/webhooks/WebhooksRepo"
import * as MemoryEventFeed from "../eventlog/MemoryEventFeed.ts"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

/** Read access to the events the memory outbox holds, for tests and fixtures. */
export class RecordedEvents extends Context.Service<
  RecordedEvents,
  { readonly all: Effect.Effect<ReadonlyArray<Envelope>> }
>()("memory-adapter/RecordedEvents") {}

interface StoredEndpoint extends EndpointRecord {
  readonly deletedAt: string | null
}

interface StoredDelivery {
  readonly id: string
  readonly accountId: string
  readonly eventId: string
  readonly eventType: EventType
  readonly endpointId: string
  readonly createdAt: string
  /** The lead its event is about: the endpoint gets one lead's events in order. */
  readonly orderingKey: string | null
  readonly status: DeliveryStatus
  readonly roundAttempts: number
  readonly nextAttemptAt: number | null
  readonly leaseUntil: number
  readonly leaseOwner: string | null
  readonly updatedAt: string
  readonly attempts: ReadonlyArray<Attempt>
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

const makeTables = () => ({
  events: MemoryTable.make({
    primaryKey: (event: Envelope) => event.id,
    indexes: { account: (event) => event.account_id }
  }),
  endpoints: MemoryTable.make({
    primaryKey: (endpoint: StoredEndpoint) => endpoint.id,
    // Deleted endpoints stay (their deliveries name them) but are neither listed nor sent to.
    indexes: { live: (endpoint) => (endpoint.deletedAt === null ? endpoint.accountId : undefined) },
    order: MemoryTable.newestFirst((endpoint: StoredEndpoint) => endpoint.created_at)
  }),
  deliveries: MemoryTable.make({
    primaryKey: (delivery: StoredDelivery) => delivery.id,
    indexes: {
      account: (delivery) => delivery.accountId,
      endpoint: (delivery) => MemoryTable.key(delivery.accountId, delivery.endpointId),
      // A lead's pending deliveries to an endpoint, oldest event first: a later one waits for them.
      pendingByKey: {
        key: (delivery) =>
          delivery.status === "pending" && delivery.orderingKey !== null
            ? MemoryTable.key(delivery.endpointId, delivery.orderingKey)
            : undefined,
        order: MemoryTable.oldestFirst((delivery: StoredDelivery) => delivery.eventId)
      },
      // The worker's queue: pending deliveries, soonest due first.
      pending: {
        key: (delivery) => (delivery.status === "pending" && delivery.nextAttemptAt !== null ? "" : undefined),
        order: MemoryTable.ascending((delivery: StoredDelivery) => delivery.nextAttemptAt!)
      }
    },
    order: MemoryTable.newestFirst((delivery: StoredDelivery) => delivery.createdAt)
  })
})

/**
 * The outbox, webhook endpoints, the delivery log and the worker's queue in
 * memory. They share tables as in SQL: an event fans out to the endpoints
 * subscribed at that moment, and the worker is woken after commit.
 */
export const layer = Layer.effectContext(
  Effect.gen(function* () {
    const { events, endpoints, deliveries } = makeTables()
    const wake = yield* PubSub.sliding<void>(1)
    const signal = () => Effect.runFork(PubSub.publish(wake, undefined))
    const commitOrder = yield* MemoryEventFeed.make

    const subscribed = (event: Envelope) =>
      [...endpoints.scan("live", event.account_id)].filter(
        (endpoint) => endpoint.enabled && endpoint.events.some((type) => type === event.type)
      )

    const outbox = Outbox.of({
      append: (batch) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const planned: Array<{ event: Envelope; endpoint: { id: string }; id: string }> = []
          for (const event of batch) {
            for (const endpoint of subscribed(event)) planned.push({ event, endpoint, id: yield* Ids.make("dlv") })
          }
          yield* atomically((tx) => {
            for (const event of batch) events.insert(tx, event)
            const queued = planned.map(
              ({ event, endpoint, id }): StoredDelivery => ({
                id,
                accountId: event.account_id,
                eventId: event.id,
                // The outbox takes only the catalog's types (Outbox.emit is typed by definition).
                eventType: event.type as EventType,
                endpointId: endpoint.id,
                createdAt: event.created_at,
                orderingKey: orderingKeyOf(event),
                status: "pending",
                roundAttempts: 0,
                nextAttemptAt: now,
                leaseUntil: 0,
                leaseOwner: null,
                updatedAt: event.created_at,
                attempts: []
              })
            )
            // Queued only once the transaction commits, as rows are on SQL: a worker must never
            // claim the delivery of a change that is then rolled back.
            tx.onCommit((committed) => {
              for (const delivery of queued) deliveries.insert(committed, delivery)
              if (queued.length > 0) signal()
              commitOrder.committed(batch)
            })
          })
        })
    })

    const repo = WebhooksRepo.of({
      insertEndpoint: (endpoint) => atomically((tx) => endpoints.insert(tx, { ...endpoint, deletedAt: null })),
      listEndpoints: (accountId, page) =>
        Effect.sync(() => {
          const slice = endpoints.page("live", accountId, page)
          return { items: slice.items.map(({ deletedAt: _, ...endpoint }) => endpoint), total: slice.total }
        }),
      findEndpoint: (accountId, id) =>
        Effect.sync(() => {
          const found = endpoints.get(id)
          if (found === undefined || found.accountId !== accountId || found.deletedAt !== null) return undefined
          const { deletedAt: _, ...endpoint } = found
          return endpoint
        }),
      // Disabling pauses the pending deliveries (no next attempt); enabling makes what waited due at once.
      updateEndpoint: (endpoint, at) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          atomically((tx) => {
            const found = endpoints.get(endpoint.id)
            if (found === undefined || found.accountId !== endpoint.accountId || found.deletedAt !== null) {
              return undefined
            }
            const enabling = !found.enabled && endpoint.enabled
            // The worker owns `failingSince`: kept as it is now, forgotten when the endpoint is enabled again.
            const stored = { ...endpoint, failingSince: enabling ? null : found.failingSince, deletedAt: null }
            endpoints.update(tx, stored)
            if (found.enabled !== endpoint.enabled) {
              for (const delivery of [
                ...deliveries.scan("endpoint", MemoryTable.key(endpoint.accountId, endpoint.id))
              ]) {
                if (delivery.status !== "pending") continue
                if (!endpoint.enabled) deliveries.update(tx, { ...delivery, nextAttemptAt: null, updatedAt: at })
                else if (delivery.nextAttemptAt === null) {
                  deliveries.update(tx, { ...delivery, nextAttemptAt: now, updatedAt: at })
                }
              }
              if (endpoint.enabled) tx.onCommit(() => signal())
            }
            const { deletedAt: _, ...updated } = stored
            return updated
          })
        ),
      deleteEndpoint: (accountId, id, at) =>
        atomically((tx) => {
          const endpoint = endpoints.get(id)
          if (endpoint === undefined || endpoint.accountId !== accountId || endpoint.deletedAt !== null) return false
          endpoints.update(tx, { ...endpoint, deletedAt: at })
          for (const delivery of [...deliveries.scan("endpoint", MemoryTable.key(accountId, id))]) {
            if (delivery.status === "pending") {
              deliveries.update(tx, { ...delivery, status: "cancelled", nextAttemptAt: null, updatedAt: at })
            }
          }
          return true
        }),
      listDeliveries: (accountId, filter, page) =>
        Effect.sync(() => {
          const where =
            filter.status === undefined ? undefined : (delivery: StoredDelivery) => delivery.status === filter.status
          const slice =
            filter.endpointId === undefined
              ? deliveries.page("account", accountId, page, where)
              : deliveries.page("endpoint", MemoryTable.key(accountId, filter.endpointId), page, where)
          return { items: slice.items.map(view), total: slice.total }
        }),
      findDelivery: (accountId, id) =>
        Effect.sync(() => {
          const delivery = deliveries.get(id)
          return delivery === undefined || delivery.accountId !== accountId ? undefined : view(delivery)
        }),
      redeliver: (accountId, id, at) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          atomically((tx) => {
            const delivery = deliveries.get(id)
            if (delivery === undefined || delivery.accountId !== accountId) return undefined
            if (endpoints.get(delivery.endpointId)?.deletedAt !== null) return "gone" as const
            if (delivery.status === "pending") return view(delivery)
            const queued: StoredDelivery = {
              ...delivery,
              status: "pending",
              roundAttempts: 0,
              nextAttemptAt: now,
              updatedAt: at
            }
            deliveries.update(tx, queued)
            tx.onCommit(signal)
            return view(queued)
          })
        ),
      recover: (accountId, endpointId, since, at) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          atomically((tx) => {
            const endpoint = endpoints.get(endpointId)
            if (endpoint === undefined || endpoint.accountId !== accountId || endpoint.deletedAt !== null)
              return undefined
            let requeued = 0
            for (const delivery of [...deliveries.scan("endpoint", MemoryTable.key(accountId, endpointId))]) {
              if (delivery.status !== "failed" || delivery.createdAt < since) continue
              deliveries.update(tx, {
                ...delivery,
                status: "pending",
                roundAttempts: 0,
                leaseUntil: 0,
                leaseOwner: null,
                nextAttemptAt: endpoint.enabled ? now : null,
                updatedAt: at
              })
              requeued++
            }
            if (requeued > 0) tx.onCommit(signal)
            return requeued
          })
        ),
      purgeEventsBefore: (before, limit) =>
        atomically((tx) => {
          // Paused deliveries are pending too (without a next attempt, so not in the worker's index).
          const waiting = new Set(
            [...deliveries.rows()].filter((delivery) => delivery.status === "pending").map((d) => d.eventId)
          )
          const old = [...events.rows()]
            .filter((event) => event.id < before && !waiting.has(event.id))
            .sort((a, b) => (a.id < b.id ? -1 : 1))
            .slice(0, limit)
          const gone = new Set(old.map((event) => event.id))
          for (const delivery of [...deliveries.rows()])
            if (gone.has(delivery.eventId)) deliveries.remove(tx, delivery.id)
          for (const event of old) events.remove(tx, event.id)
          return old.length
        }),
      disableFailing: (accountId, endpointId, failingBefore, at) =>
        atomically((tx) => {
          const endpoint = endpoints.get(endpointId)
          if (
            endpoint === undefined ||
            endpoint.accountId !== accountId ||
            endpoint.deletedAt !== null ||
            !endpoint.enabled ||
            endpoint.failingSince === null ||
            endpoint.failingSince > failingBefore
          ) {
            return undefined
          }
          const disabled = { ...endpoint, enabled: false }
          endpoints.update(tx, disabled)
          for (const delivery of [...deliveries.scan("endpoint", MemoryTable.key(endpoint.accountId, endpointId))]) {
            if (delivery.status === "pending")
              deliveries.update(tx, { ...delivery, nextAttemptAt: null, updatedAt: at })
          }
          const { deletedAt: _, ...record } = disabled
          return record
        })
    })

    /** Whether an earlier event about the same lead is still pending to the endpoint. */
    const waitsForEarlier = (delivery: StoredDelivery) => {
      if (delivery.orderingKey === null) return false
      for (const earlier of deliveries.scan(
        "pendingByKey",
        MemoryTable.key(delivery.endpointId, delivery.orderingKey)
      )) {
        return earlier.eventId < delivery.eventId
      }
      return false
    }

    const queue = DeliveryQueue.of({
      claim: (worker, now, leaseMillis, limit) =>
        atomically((tx) => {
          const due: Array<StoredDelivery> = []
          for (const delivery of deliveries.scan("pending", "")) {
            if (due.length >= limit || delivery.nextAttemptAt! > now) break
            if (delivery.leaseUntil <= now && !waitsForEarlier(delivery)) due.push(delivery)
          }
          return due.map((delivery) => {
            deliveries.update(tx, { ...delivery, leaseUntil: now + leaseMillis, leaseOwner: worker })
            const endpoint = endpoints.get(delivery.endpointId)!
            return {
              id: delivery.id,
              eventId: delivery.eventId,
              eventType: delivery.eventType,
              body: JSON.stringify(events.get(delivery.eventId)),
              url: endpoint.url,
              secret: endpoint.secret,
              previousSecret:
                endpoint.previousSecretExpiresAt !== null && Date.parse(endpoint.previousSecretExpiresAt) > now
                  ? endpoint.previousSecret
                  : null,
              endpointId: endpoint.id,
              accountId: endpoint.accountId,
              attempt: delivery.roundAttempts + 1,
              dueAt: delivery.nextAttemptAt!,
              retryPolicy: endpoint.retry_policy
            }
          })
        }),
      record: (worker, attempt) =>
        atomically((tx) => {
          const delivery = deliveries.get(attempt.deliveryId)
          if (
            delivery === undefined ||
            delivery.accountId !== attempt.accountId ||
            delivery.leaseOwner !== worker ||
            delivery.status !== "pending"
          )
            return
          const next = attempt.next
          const endpoint = endpoints.get(delivery.endpointId)
          // The endpoint's health: written only when it changes (its first failure, its first success).
          if (endpoint !== undefined) {
            if (next._tag === "Delivered" && endpoint.failingSince !== null) {
              endpoints.update(tx, { ...endpoint, failingSince: null })
            } else if (next._tag !== "Delivered" && endpoint.failingSince === null) {
              endpoints.update(tx, { ...endpoint, failingSince: iso(attempt.attemptedAt) })
            }
          }
          deliveries.update(tx, {
            ...delivery,
            attempts: [
              ...delivery.attempts,
              {
                number: delivery.attempts.length + 1,
                attempted_at: iso(attempt.attemptedAt),
                status_code: attempt.statusCode,
                duration_ms: attempt.durationMs,
                error: attempt.error
              }
            ],
            leaseOwner: null,
            leaseUntil: 0,
            updatedAt: iso(attempt.attemptedAt + attempt.durationMs),
            roundAttempts: delivery.roundAttempts + 1,
            status: next._tag === "Delivered" ? "delivered" : next._tag === "Failed" ? "failed" : "pending",
            // A retry of an endpoint disabled meanwhile waits unscheduled, as its other pending deliveries do.
            nextAttemptAt: next._tag === "RetryAt" && endpoint?.enabled !== false ? next.at : null
          })
        }),
      backlog: (now) =>
        Effect.sync(() => {
          let due = 0
          let oldestDueAt: number | undefined
          for (const delivery of deliveries.scan("pending", "")) {
            if (delivery.nextAttemptAt! > now) break
            due++
            oldestDueAt ??= delivery.nextAttemptAt!
          }
          return { due, oldestDueAt }
        }),
      nextDueAt: Effect.sync(() => {
        // A leased delivery is due again only when its lease ends; none is due before its next attempt.
        let next: number | undefined
        for (const delivery of deliveries.scan("pending", "")) {
          if (next !== undefined && delivery.nextAttemptAt! >= next) break
          const due = Math.max(delivery.nextAttemptAt!, delivery.leaseUntil)
          if (next === undefined || due < next) next = due
        }
        return next
      }),
      wakeups: Effect.map(PubSub.subscribe(wake), (subscription) => Effect.asVoid(PubSub.take(subscription)))
    })

    const log = EventLog.of({
      list: (accountId, query) => Effect.sync(() => Events.pageOf([...events.scan("account", accountId)], query)),
      find: (accountId, id) =>
        Effect.sync(() => {
          const event = events.get(id)
          return event?.account_id === accountId ? event : undefined
        })
    })

    return Context.make(Outbox, outbox).pipe(
      Context.add(EventLog, log),
      Context.add(EventFeed, commitOrder.feed),
      Context.add(WebhooksRepo, repo),
      Context.add(DeliveryQueue, queue),
      Context.add(RecordedEvents, { all: Effect.sync(() => [...events.rows()]) })
    )
  })
)

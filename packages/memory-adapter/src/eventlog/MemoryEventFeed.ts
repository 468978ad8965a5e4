import { Effect, PubSub } from "effect"
import type { Envelope } from "@leadline/core/events/Event"
import { EventFeed, type Position } from "@leadline/core/eventlog/EventFeed"

/**
 * The events in the order their transactions committed (the memory outbox calls `committed` from
 * its commit hook): a place is the event's rank in that order, so the fan-out and a resume need
 * no horizon here. Wake-ups are an in-process PubSub, as the worker's are.
 */
export const make = Effect.gen(function* () {
  const log: Array<Envelope> = []
  const rank = new Map<string, number>()
  const wake = yield* PubSub.sliding<void>(1)

  const committed = (events: ReadonlyArray<Envelope>) => {
    if (events.length === 0) return
    for (const event of events) rank.set(event.id, log.push(event))
    Effect.runFork(PubSub.publish(wake, undefined))
  }

  const at = (position: Position) => Number(position)

  const feed = EventFeed.of({
    head: Effect.sync(() => String(log.length)),
    next: (after, limit) =>
      Effect.sync(() => {
        const start = at(after)
        const items = log.slice(start, start + limit).map((event, i) => ({ position: String(start + i + 1), event }))
        return { items, reached: String(start + items.length), pending: false }
      }),
    between: (accountId, types, after, upTo, limit) =>
      Effect.sync(() => {
        const items = []
        for (let i = at(after); i < Math.min(at(upTo), log.length) && items.length < limit; i++) {
          const event = log[i]!
          if (event.account_id === accountId && types.includes(event.type))
            items.push({ position: String(i + 1), event })
        }
        return items
      }),
    positionOf: (accountId, eventId) =>
      Effect.sync(() => {
        const position = rank.get(eventId)
        return position !== undefined && log[position - 1]!.account_id === accountId ? String(position) : undefined
      }),
    wakeups: Effect.map(PubSub.subscribe(wake), (subscription) => Effect.asVoid(PubSub.take(subscription)))
  })

  return { feed, committed }
})

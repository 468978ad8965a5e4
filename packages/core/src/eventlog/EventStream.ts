import { type Cause, Context, Duration, Effect, Layer, Metric, Option, Queue, Schema, Stream } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { decodeInput, type InvalidInput, invalidField, type PermissionDenied } from "../Errors.ts"
import type { Envelope } from "../events/Event.ts"
import * as OpsMetrics from "../observability/OpsMetrics.ts"
import * as Tracing from "../Tracing.ts"
import { EventFeed, type Position } from "./EventFeed.ts"
import { EventId } from "./Events.ts"
import { TypeFilter, visibleTypes } from "./Visibility.ts"

/** Deployment settings of `GET /api/v1/stream`; the contract's defaults. */
export class StreamSettings extends Context.Reference<{
  /** How often an idle stream sends a comment line, so proxies keep it open (15 s). */
  readonly heartbeatMillis: number
  /** Events a connection may have waiting to be written before it is ended with a reset (1,000). */
  readonly buffer: number
}>("core/StreamSettings", { defaultValue: () => ({ heartbeatMillis: 15_000, buffer: 1_000 }) }) {}

/** The query of `GET /api/v1/stream`, each parameter checked on its own so a 400 names the one at fault. */
export const EventStreamQuery = Schema.Struct({
  type: Schema.optional(TypeFilter),
  last_event_id: Schema.optional(
    EventId.annotate({
      description:
        "Resume after this event (for clients that cannot send the `Last-Event-ID` header, which wins when both are given)"
    })
  )
}).annotate({ identifier: "EventStreamQuery" })
export type EventStreamQuery = typeof EventStreamQuery.Type

/** What a stream carries: the account's events, a heartbeat, and, last, a reset for a client too far behind. */
export type StreamItem =
  | { readonly _tag: "Event"; readonly event: Envelope }
  | { readonly _tag: "Heartbeat" }
  | { readonly _tag: "Reset"; readonly lastEventId: string | null }

/** Events read from the log per query, by the fan-out and by a resume's catch-up. */
const PAGE = 500
/** Reads again this soon while a commit waits on an older transaction still running; doubling up to a cap. */
const PENDING_RETRY_MILLIS = 5
const PENDING_RETRY_CAP_MILLIS = 200
/** Without a wake-up (a lost LISTEN connection), the server still reads the log this often. */
const FALLBACK_MILLIS = 1_000
/** Streams woken per turn of the event loop when an event goes out. */
const DISPATCH_SLICE = 100
/**
 * The next turn of the event loop: I/O waiting to be handled runs first. `setImmediate` where there
 * is one (Node), not a timer: a timer of 0 waits at least a millisecond, ten of them for a thousand
 * streams. A resume after the fan-out was interrupted is ignored.
 */
const immediately: (run: () => void) => unknown =
  (globalThis as { readonly setImmediate?: (run: () => void) => unknown }).setImmediate ?? ((run) => setTimeout(run, 0))
const nextTurn = Effect.callback<void>((resume) => {
  immediately(() => resume(Effect.void))
})

/** A heartbeat in a stream's queue: the same object for every stream. */
const HEARTBEAT: { readonly _tag: "Heartbeat" } = { _tag: "Heartbeat" }

interface Subscriber {
  readonly types: ReadonlySet<string>
  readonly queue: Queue.Queue<Envelope | typeof HEARTBEAT, Cause.Done>
  overflowed: boolean
  /** Whether an event went to it since the last heartbeat round. */
  busy: boolean
}

/**
 * `GET /api/v1/stream` (docs/contract.md, "Stream"): the account's events as they commit, as a key
 * may see them (`Visibility.ts`), resumable after any event of the log. One fan-out per server:
 * a fiber that reads the log once per wake-up (a NOTIFY at commit on SQL) and hands each open
 * stream its account's events, so the database's load does not grow with the number of streams.
 * A stream whose buffer fills is ended with a reset instead of slowing the fan-out for the rest.
 */
export class EventStream extends Context.Service<
  EventStream,
  {
    /**
     * The stream a key asked for; `lastEventId` is the `Last-Event-ID` header, which wins over the
     * query's. `until`, when given, ends the stream (after what it holds) once it succeeds: a server
     * closing ends its streams so clients reconnect elsewhere.
     */
    readonly open: (
      query: EventStreamQuery,
      lastEventId: string | undefined,
      until?: Effect.Effect<void>
    ) => Effect.Effect<Stream.Stream<StreamItem>, PermissionDenied | InvalidInput, CurrentPrincipal>
    /** Streams open on this server, for tests and metrics. */
    readonly openCount: Effect.Effect<number>
  }
>()("core/EventStream") {
  static readonly layer: Layer.Layer<EventStream, never, EventFeed> = Layer.effect(
    EventStream,
    Effect.gen(function* () {
      const feed = yield* EventFeed
      const settings = yield* StreamSettings
      const decodeQuery = decodeInput(Schema.toType(EventStreamQuery), "query")
      const decodeId = Schema.decodeUnknownOption(EventId)
      const byAccount = new Map<string, Set<Subscriber>>()
      let open = 0
      /**
       * Where the fan-out has read to; undefined while no stream is open, when nothing reads the
       * log (a server with no streams costs the database nothing per event).
       */
      let cursor: Position | undefined
      yield* Metric.update(OpsMetrics.streamsOpen, 0)

      // The cursor is taken and the stream joins the fan-out in one synchronous step, so no read
      // of the log runs between the two. The first stream starts the cursor where it starts itself
      // (`start`), or at the log's head when it resumes from further back.
      const subscribe = (accountId: string, types: ReadonlyArray<string>, start: Position | undefined) =>
        Effect.gen(function* () {
          const queue = yield* Queue.bounded<Envelope | typeof HEARTBEAT, Cause.Done>(settings.buffer)
          const head = cursor === undefined ? (start ?? (yield* feed.head)) : undefined
          const subscriber: Subscriber = { types: new Set(types), queue, overflowed: false, busy: false }
          const set = byAccount.get(accountId) ?? new Set()
          byAccount.set(accountId, set)
          set.add(subscriber)
          open++
          cursor ??= head!
          return { subscriber, upTo: cursor }
        }).pipe(Effect.tap(() => Metric.update(OpsMetrics.streamsOpen, open)))

      const unsubscribe = (accountId: string, subscriber: Subscriber) =>
        Effect.sync(() => {
          open--
          const set = byAccount.get(accountId)
          set?.delete(subscriber)
          if (set?.size === 0) byAccount.delete(accountId)
        }).pipe(Effect.andThen(Effect.suspend(() => Metric.update(OpsMetrics.streamsOpen, open))))

      // The streams a page goes to, per account: those open as it is read. Taken in the same
      // synchronous step as the cursor moves past the page, so a stream that joins while it goes out
      // started after it (its catch-up reads the page from the log) and is left out.
      const targetsOf = (events: ReadonlyArray<Envelope>) => {
        const targets = new Map<string, ReadonlyArray<Subscriber>>()
        for (const event of events)
          if (!targets.has(event.account_id))
            targets.set(event.account_id, [...(byAccount.get(event.account_id) ?? [])])
        return targets
      }

      const dispatch = (events: ReadonlyArray<Envelope>, targets: ReadonlyMap<string, ReadonlyArray<Subscriber>>) =>
        Effect.gen(function* () {
          let offered = 0
          for (const event of events) {
            for (const subscriber of targets.get(event.account_id)!) {
              const set = byAccount.get(event.account_id)
              // Gone meanwhile (closed, or ended for being too far behind).
              if (set === undefined || !set.has(subscriber) || !subscriber.types.has(event.type)) continue
              subscriber.busy = true
              if (!Queue.offerUnsafe(subscriber.queue, event)) {
                // Too far behind: it ends after what it holds, with a reset, and resumes from its last id.
                subscriber.overflowed = true
                Queue.endUnsafe(subscriber.queue)
                set.delete(subscriber)
              }
              // Every stream an offer wakes writes in the same turn of the event loop: a slice at a
              // time, with a turn between, lets the server's requests in (docs/performance.md,
              // "A thousand streams").
              if (++offered % DISPATCH_SLICE === 0) yield* nextTurn
            }
          }
        })

      /** Reads the log up to now; true when a commit is waiting on an older transaction. */
      const round = Effect.gen(function* () {
        if (byAccount.size === 0 || cursor === undefined) {
          // Nobody to tell: nothing is read, and the next first stream starts from the head.
          cursor = undefined
          return false
        }
        let from: Position = cursor
        while (true) {
          const page = yield* feed.next(from, PAGE)
          const events = page.items.map((item) => item.event)
          // Moved on first, with the page's streams taken at once: one joining while it goes out starts after it.
          cursor = from = page.reached
          yield* dispatch(events, targetsOf(events))
          if (page.items.length < PAGE) return page.pending
        }
      })

      // At shutdown every stream ends (a client reconnects elsewhere with its last id), so the
      // server's close does not wait on connections that would never end by themselves.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const set of byAccount.values()) for (const subscriber of set) Queue.endUnsafe(subscriber.queue)
        })
      )
      // Heartbeats come from here, one round for every stream, rather than from a timer merged into
      // each stream: a merge costs each stream a fiber and a hand-over per event, which at a thousand
      // streams was most of the fan-out's time (docs/performance.md, "A thousand streams").
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.andThen(
            Effect.sleep(Duration.millis(settings.heartbeatMillis)),
            Effect.sync(() => {
              for (const set of byAccount.values())
                for (const subscriber of set) {
                  // A full queue is a stream already far behind: a heartbeat would add nothing.
                  if (!subscriber.busy) Queue.offerUnsafe(subscriber.queue, HEARTBEAT)
                  subscriber.busy = false
                }
            })
          )
        )
      )
      const wakeup = yield* feed.wakeups
      yield* Effect.forkScoped(
        Effect.gen(function* () {
          let retry = PENDING_RETRY_MILLIS
          while (true) {
            const pending = yield* round.pipe(
              Effect.catchCause((cause) => Effect.as(Effect.logWarning("event stream fan-out failed", cause), false))
            )
            if (pending) {
              yield* Effect.sleep(Duration.millis(retry))
              retry = Math.min(retry * 2, PENDING_RETRY_CAP_MILLIS)
            } else {
              retry = PENDING_RETRY_MILLIS
              yield* Effect.raceFirst(wakeup, Effect.sleep(Duration.millis(FALLBACK_MILLIS)))
            }
          }
        })
      )

      const open_ = Effect.fnUntraced(function* (
        raw: EventStreamQuery,
        header: string | undefined,
        until?: Effect.Effect<void>
      ) {
        const principal = yield* CurrentPrincipal
        const query = yield* decodeQuery(raw)
        if (header !== undefined && Option.isNone(decodeId(header))) {
          return yield* invalidField("Last-Event-ID", "must be an event id (evt_…)", "headers")
        }
        const types = yield* visibleTypes(principal.scopes, query.type)
        const lastEventId = header ?? query.last_event_id
        // A new stream starts where the fan-out stands as it is opened (its head when none is
        // running), before the response begins: every event committed after the client sees it
        // open is sent, whenever the stream is first read.
        let from: Position | undefined = cursor ?? (lastEventId === undefined ? yield* feed.head : undefined)
        if (lastEventId !== undefined) {
          from = yield* feed.positionOf(principal.accountId, lastEventId)
          if (from === undefined) {
            return yield* invalidField(
              header !== undefined ? "Last-Event-ID" : "last_event_id",
              "no such event in this account's log (30 days)",
              header !== undefined ? "headers" : "query"
            )
          }
        }
        const accountId = principal.accountId

        const events = Stream.unwrap(
          Effect.gen(function* () {
            const { subscriber, upTo } = yield* Effect.acquireRelease(
              subscribe(accountId, types, lastEventId === undefined ? from : undefined),
              ({ subscriber }) => unsubscribe(accountId, subscriber)
            )
            if (until !== undefined)
              yield* Effect.forkScoped(
                Effect.andThen(
                  until,
                  Effect.sync(() => Queue.endUnsafe(subscriber.queue))
                )
              )
            // What it missed from the log up to where the fan-out stood when it joined: a resume's
            // history, or what a new stream's fan-out passed between its opening and its first read.
            const catchUp =
              from === undefined || from === upTo
                ? Stream.empty
                : Stream.paginate(from, (after: Position) =>
                    Effect.map(feed.between(accountId, types, after, upTo, PAGE), (items) => [
                      items.map((item) => item.event),
                      items.length < PAGE ? Option.none() : Option.some(items[items.length - 1]!.position)
                    ])
                  )
            let last: string | null = lastEventId ?? null
            const delivered = Stream.concat(catchUp, Stream.fromQueue(subscriber.queue)).pipe(
              Stream.map((item): StreamItem => {
                if (item === HEARTBEAT) return HEARTBEAT
                const event = item as Envelope
                last = event.id
                return { _tag: "Event", event }
              })
            )
            return Stream.concat(
              delivered,
              Stream.suspend(() =>
                subscriber.overflowed ? Stream.succeed<StreamItem>({ _tag: "Reset", lastEventId: last }) : Stream.empty
              )
            )
          })
        )
        return events
      }, Tracing.span("EventStream.open"))

      return EventStream.of({ open: open_, openCount: Effect.sync(() => open) })
    })
  )
}

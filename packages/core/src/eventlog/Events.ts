import { Clock, Context, Effect, Layer, Schema } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { decodeInput, type InvalidInput, invalidField, type PermissionDenied } from "../Errors.ts"
import { Limit, QueryTime } from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import type { Envelope } from "../events/Event.ts"
import { EventLog, type EventQuery } from "./EventLog.ts"
import { TypeFilter, visibleTypes } from "./Visibility.ts"

/** How far back `GET /api/v1/events` reaches (Stripe's 30 days). */
export const RETENTION_DAYS = 30
const DAY_MILLIS = 86_400_000
const DEFAULT_LIMIT = 50

export const EventId = Schema.String.check(
  Schema.isPattern(/^evt_[0-9a-z]{1,64}$/, { message: "must be an event id (evt_…)" })
)

/** The query of `GET /api/v1/events`: each parameter checked on its own, so a 400 names the one at fault. */
export const EventListQuery = Schema.Struct({
  limit: Schema.optional(Limit),
  type: Schema.optional(TypeFilter),
  created_after: Schema.optional(QueryTime.annotate({ description: "Recorded at or after this time" })),
  created_before: Schema.optional(QueryTime.annotate({ description: "Recorded before this time" })),
  starting_after: Schema.optional(
    EventId.annotate({ description: "A cursor: the events recorded before this one (the last id of a page)" })
  ),
  ending_before: Schema.optional(
    EventId.annotate({ description: "A cursor: the events recorded after this one (the first id of a page)" })
  )
}).annotate({ identifier: "EventListQuery" })
export type EventListQuery = typeof EventListQuery.Type

export const EventListMeta = Schema.Struct({
  limit: Schema.Int,
  has_more: Schema.Boolean.annotate({
    description: "More events past this page (older; newer for a page asked with ending_before)"
  }),
  next_starting_after: Schema.NullOr(Schema.String).annotate({
    description: "starting_after for the next, older page (its last event's id), when there are older events"
  }),
  previous_ending_before: Schema.NullOr(Schema.String).annotate({
    description: "ending_before for the newer page (its first event's id), when there are newer events"
  })
}).annotate({ identifier: "EventListMeta" })
export type EventListMeta = typeof EventListMeta.Type

/**
 * The account's events of the last 30 days, newest first (docs/contract.md, "Events"): what a
 * receiver that missed deliveries reads to catch up. A key sees the types of the resources it may
 * read (`lead.*` with `leads:read`, `message.*` with `conversations:read`, …); a full-access key sees
 * every type.
 */
export class Events extends Context.Service<
  Events,
  {
    readonly list: (
      query?: EventListQuery
    ) => Effect.Effect<
      { events: ReadonlyArray<Envelope>; meta: EventListMeta },
      PermissionDenied | InvalidInput,
      CurrentPrincipal
    >
  }
>()("core/Events") {
  static readonly layer: Layer.Layer<Events, never, EventLog> = Layer.effect(
    Events,
    Effect.gen(function* () {
      const log = yield* EventLog
      const decodeQuery = decodeInput(Schema.toType(EventListQuery), "query")

      const list = Effect.fnUntraced(function* (raw: EventListQuery = {}) {
        const principal = yield* CurrentPrincipal
        const query = yield* decodeQuery(raw)
        const types = yield* visibleTypes(principal.scopes, query.type)
        if (query.starting_after !== undefined && query.ending_before !== undefined) {
          return yield* invalidField(
            "ending_before",
            "starting_after and ending_before cannot be used together",
            "query"
          )
        }
        const cursor = query.starting_after ?? query.ending_before
        if (cursor !== undefined && (yield* log.find(principal.accountId, cursor)) === undefined) {
          const parameter = query.starting_after !== undefined ? "starting_after" : "ending_before"
          return yield* invalidField(parameter, "no such event in this account", "query")
        }
        const limit = query.limit ?? DEFAULT_LIMIT
        const search: EventQuery = {
          types,
          since: new Date((yield* Clock.currentTimeMillis) - RETENTION_DAYS * DAY_MILLIS).toISOString(),
          createdAfter: query.created_after === undefined ? undefined : new Date(query.created_after).toISOString(),
          createdBefore: query.created_before === undefined ? undefined : new Date(query.created_before).toISOString(),
          window:
            query.starting_after !== undefined
              ? { by: "after", id: query.starting_after }
              : query.ending_before !== undefined
                ? { by: "before", id: query.ending_before }
                : { by: "first" },
          limit
        }
        const page = yield* log.list(principal.accountId, search)
        const items = page.items
        const newer = search.window.by === "after" || (search.window.by === "before" && page.hasMore)
        const older = search.window.by === "before" || page.hasMore
        return {
          events: items,
          meta: {
            limit,
            has_more: page.hasMore,
            next_starting_after: older && items.length > 0 ? items[items.length - 1]!.id : null,
            previous_ending_before: newer && items.length > 0 ? items[0]!.id : null
          }
        }
      }, Tracing.span("Events.list"))

      return Events.of({ list })
    })
  )
}

/** The events of `all` a query asks for, newest first: the memory log's rule, as the SQL log says it. */
export const pageOf = (
  all: ReadonlyArray<Envelope>,
  query: EventQuery
): { readonly items: ReadonlyArray<Envelope>; readonly hasMore: boolean } => {
  const matching = all
    .filter(
      (event) =>
        query.types.includes(event.type) &&
        event.created_at >= query.since &&
        (query.createdAfter === undefined || event.created_at >= query.createdAfter) &&
        (query.createdBefore === undefined || event.created_at < query.createdBefore)
    )
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
  const window = query.window
  if (window.by === "first") {
    return { items: matching.slice(0, query.limit), hasMore: matching.length > query.limit }
  }
  if (window.by === "after") {
    const older = matching.filter((event) => event.id < window.id)
    return { items: older.slice(0, query.limit), hasMore: older.length > query.limit }
  }
  const newer = matching.filter((event) => event.id > window.id)
  return { items: newer.slice(Math.max(0, newer.length - query.limit)), hasMore: newer.length > query.limit }
}

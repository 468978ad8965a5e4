import { Clock, Context, Effect, Layer, Option } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { invalidField, type InvalidInput, type PermissionDenied } from "../Errors.ts"
import * as Tracing from "../Tracing.ts"
import {
  type MetricName,
  type Section,
  type Summary,
  type SummaryQuery,
  sections,
  series,
  type Timeseries,
  type TimeseriesQuery
} from "./AnalyticsQuery.ts"
import * as Calendar from "../metrics/Calendar.ts"
import type * as Metrics from "../metrics/Metrics.ts"

/** The stores the slices' metrics read. */
export type Needs = Metrics.Needs<Section>

/**
 * Analytics (docs/contract-commerce-ai.md §7): a summary of the account's range and one timeseries at a
 * time, counted live from the slices' stores between the instants `Calendar` computes.
 */
export class Analytics extends Context.Service<
  Analytics,
  {
    readonly summary: (query: SummaryQuery) => Effect.Effect<Summary, PermissionDenied | InvalidInput, CurrentPrincipal>
    readonly timeseries: (
      query: TimeseriesQuery
    ) => Effect.Effect<Timeseries, PermissionDenied | InvalidInput, CurrentPrincipal>
  }
>()("core/Analytics") {
  static readonly layer: Layer.Layer<Analytics, never, Needs> = Layer.effect(
    Analytics,
    Effect.gen(function* () {
      const stores = yield* Effect.context<Needs>()
      const count = <A>(effect: Effect.Effect<A, never, Needs>) => Effect.provideContext(effect, stores)

      const summary = (query: SummaryQuery) =>
        Effect.gen(function* () {
          const principal = yield* authorize("analytics.view")
          const range = yield* resolve(query, "summary")
          const window = Calendar.window(range)
          const parts = yield* count(
            Effect.forEach(
              sections,
              (section): Effect.Effect<unknown, never, Needs> => section.summarize(principal.accountId, window),
              {
                concurrency: "unbounded"
              }
            )
          )
          return {
            ...echo(range, query),
            ...Object.fromEntries(sections.map((section, i) => [section.key, parts[i]]))
          } as Summary
        }).pipe(Tracing.span("Analytics.summary"))

      const timeseries = (query: TimeseriesQuery) =>
        Effect.gen(function* () {
          const principal = yield* authorize("analytics.view")
          const interval = query.interval ?? "day"
          const range = yield* resolve(query, interval)
          const metric = series.get(query.metric)
          if (metric === undefined) return yield* invalidField("metric", "is not a metric", "query")
          if (metric.perCurrency === true && query.currency === undefined)
            return yield* invalidField("currency", `is required by the ${query.metric} metric`, "query")
          if (metric.perCurrency !== true && query.currency !== undefined)
            return yield* invalidField("currency", `is only taken by money metrics, not ${query.metric}`, "query")
          const buckets = Calendar.buckets(range, interval)
          const values = yield* count(metric.values(principal.accountId, buckets.bounds, query.currency))
          return {
            metric: query.metric as MetricName,
            interval,
            ...echo(range, query),
            currency: query.currency ?? null,
            points: buckets.starts.map((start, i) => ({
              start: Calendar.formatInstant(start, range.zone),
              value: values[i] ?? 0
            }))
          }
        }).pipe(Tracing.span("Analytics.timeseries"))

      return Analytics.of({ summary, timeseries })
    })
  )
}

// The zone as the caller named it: ICU answers some names with a legacy alias (Asia/Kolkata as
// Asia/Calcutta), which a caller comparing its own value would not recognise.
const echo = (range: Calendar.Range, query: SummaryQuery) => ({
  from: Calendar.formatDate(range.from),
  to: Calendar.formatDate(range.to),
  tz: query.tz ?? range.zone.id
})

const DEFAULT_DATES = 30

/** The query's dates and zone, checked: a known IANA zone, real dates, `from` ≤ `to`, within the span of the interval. */
const resolve = (query: SummaryQuery, span: Calendar.Interval | "summary") =>
  Effect.gen(function* () {
    const zone = Calendar.zone(query.tz ?? "UTC")
    if (Option.isNone(zone))
      return yield* invalidField("tz", "must be an IANA time zone name, such as Europe/Berlin or UTC", "query")
    const date = (field: "from" | "to", text: string | undefined) =>
      text === undefined
        ? Effect.succeed(undefined)
        : Option.match(Calendar.parseDate(text), {
            onNone: () => Effect.fail(invalidField(field, "must be a date as YYYY-MM-DD", "query")),
            onSome: Effect.succeed
          })
    const last = (yield* date("to", query.to)) ?? (yield* today(zone.value))
    const first = (yield* date("from", query.from)) ?? last - (DEFAULT_DATES - 1)
    if (first > last) return yield* invalidField("to", "must not be before from", "query")
    const range: Calendar.Range = { from: first, to: last, zone: zone.value }
    const limit = Calendar.maxDates[span]
    if (Calendar.dates(range) > limit)
      return yield* invalidField(
        "to",
        `the range spans ${Calendar.dates(range)} dates; at most ${limit} ${span === "summary" ? "for a summary" : `with interval ${span}`}`,
        "query"
      )
    return range
  })

const today = (zone: Calendar.Range["zone"]) => Effect.map(Clock.currentTimeMillis, (now) => Calendar.dateAt(now, zone))

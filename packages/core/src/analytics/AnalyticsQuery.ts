import { Schema } from "effect"
import { Currency } from "../money/Money.ts"
import * as Slices from "../Slices.ts"
import * as Calendar from "../metrics/Calendar.ts"
import type * as Metrics from "../metrics/Metrics.ts"

/** The metrics of the slices that count something (`Slice.metrics`), in the order of `Slices.all`. */
export type Section = NonNullable<Slices.All[number]["metrics"]>

export const sections: ReadonlyArray<Section> = Slices.all.flatMap((slice) =>
  slice.metrics === undefined ? [] : [slice.metrics as Section]
)

export type MetricName = Section extends infer S
  ? S extends Metrics.Metrics<string, Schema.Top, infer N, unknown>
    ? N
    : never
  : never

/** Every timeseries by name, from the slices that count them. */
export const series: ReadonlyMap<string, Metrics.Series<Metrics.Needs<Section>>> = new Map(
  sections.flatMap((section) =>
    Object.entries(section.series as Record<string, Metrics.Series<Metrics.Needs<Section>>>)
  )
)

export const MetricName = Schema.Literals([...series.keys()] as unknown as ReadonlyArray<MetricName>).annotate({
  identifier: "MetricName",
  description: [...series].map(([name, s]) => `\`${name}\`: ${s.description}`).join("; ")
})

const LocalDate = Schema.String.annotate({
  description: "A local calendar date in `tz`, `YYYY-MM-DD`, included in the range",
  examples: ["2026-11-01"]
})

export const SummaryQuery = Schema.Struct({
  from: Schema.optional(LocalDate).annotate({
    description: "The first date of the range (default: 29 days before `to`)"
  }),
  to: Schema.optional(LocalDate).annotate({ description: "The last date of the range (default: today in `tz`)" }),
  tz: Schema.optional(Schema.String).annotate({
    description: "An IANA time zone name (`America/Sao_Paulo`); default `UTC`. Offsets such as `+03:00` are refused.",
    examples: ["Europe/Berlin"]
  })
})
export type SummaryQuery = typeof SummaryQuery.Type

export const TimeseriesQuery = Schema.Struct({
  ...SummaryQuery.fields,
  metric: MetricName,
  interval: Schema.optional(Schema.Literals(Calendar.intervals)).annotate({
    description:
      "`day` (default), `week` (from Monday), `month`: local calendar units; `hour`: consecutive hours of real time (a 25-hour day has 25)"
  }),
  currency: Schema.optional(Currency).annotate({ description: "Required by `revenue`, refused by the other metrics" })
})
export type TimeseriesQuery = typeof TimeseriesQuery.Type

type SummaryFields = { readonly [S in Section as S["key"]]: S["summary"] }

export const Summary = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  tz: Schema.String,
  ...(Object.fromEntries(sections.map((section) => [section.key, section.summary])) as unknown as SummaryFields)
}).annotate({ identifier: "AnalyticsSummary" })
export type Summary = typeof Summary.Type

export const Point = Schema.Struct({
  start: Schema.String.annotate({ description: "The bucket's start, local time with its offset then" }),
  value: Schema.Int
}).annotate({ identifier: "AnalyticsPoint" })

export const Timeseries = Schema.Struct({
  metric: MetricName,
  interval: Schema.Literals(Calendar.intervals),
  from: Schema.String,
  to: Schema.String,
  tz: Schema.String,
  currency: Schema.NullOr(Schema.String),
  points: Schema.Array(Point)
}).annotate({ identifier: "AnalyticsTimeseries" })
export type Timeseries = typeof Timeseries.Type

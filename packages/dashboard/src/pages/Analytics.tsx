import { MetricName } from "@leadline/core/analytics/AnalyticsQuery"
import { HttpApi } from "effect/http-api"
import { AnalyticsApi } from "@leadline/http-adapter/analytics/AnalyticsApi"
import { routes } from "../api.ts"
import type { Session } from "../session.ts"
import { ErrorText, Loading, money, Page, useLoad } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(AnalyticsApi))

type Metric = (typeof MetricName.literals)[number]

const zone = Intl.DateTimeFormat().resolvedOptions().timeZone

/** `leads_created` → "Leads created"; `p90` and the like stay as they are. */
const human = (name: string) => {
  const words = name.replace(/_/g, " ")
  return words.charAt(0).toUpperCase() + words.slice(1)
}

const SECONDS = /seconds$/

/** A number as a card shows it: a rate as a percentage, seconds as minutes or hours, null as a dash. */
const shown = (value: number | null, unit: "count" | "seconds" | "rate") => {
  if (value === null) return "—"
  if (unit === "rate") return value.toLocaleString(undefined, { style: "percent", maximumFractionDigits: 1 })
  if (unit === "count") return value.toLocaleString()
  if (value < 90) return `${value} s`
  if (value < 5400) return `${Math.round(value / 60)} min`
  return `${(value / 3600).toFixed(1)} h`
}

/** A local date, `YYYY-MM-DD…` of a bucket's start, as this browser writes it. */
const day = (start: string) =>
  new Date(`${start.slice(0, 10)}T12:00:00`).toLocaleDateString(undefined, { month: "short", day: "numeric" })

/**
 * The summary as cards: each section (leads, conversations, messages, orders) a group, each number
 * a card, a breakdown (leads by status, response times) a card of lines, revenue one per currency.
 */
const Cards = (props: { summary: Record<string, unknown> }) => (
  <div class="card-groups">
    {Object.entries(props.summary)
      .filter(([key]) => key !== "from" && key !== "to" && key !== "tz")
      .map(([section, fields]) => (
        <section key={section} class="card-group" aria-label={human(section)}>
          <h2>{human(section)}</h2>
          <div class="cards">
            {Object.entries(fields as Record<string, unknown>).map(([name, value]) => {
              const unit = SECONDS.test(name) ? "seconds" : name.endsWith("_rate") ? "rate" : "count"
              const label = human(name.replace(/_seconds$/, ""))
              if (typeof value === "number")
                return (
                  <div key={name} class="card">
                    <span class="card-label">{label}</span>
                    <span class="card-value">{shown(value, unit)}</span>
                  </div>
                )
              if (Array.isArray(value))
                return (
                  <div key={name} class="card">
                    <span class="card-label">{label}</span>
                    {value.length === 0 ? (
                      <span class="card-value">—</span>
                    ) : (
                      (value as Array<{ currency: string; amount: number; orders?: number }>).map((entry) => (
                        <span key={entry.currency} class="card-value">
                          {money(entry.amount, entry.currency)}
                        </span>
                      ))
                    )}
                  </div>
                )
              if (value !== null && typeof value === "object")
                return (
                  <div key={name} class="card">
                    <span class="card-label">{label}</span>
                    <dl class="card-lines">
                      {Object.entries(value as Record<string, number | null>).map(([part, n]) => (
                        <div key={part}>
                          <dt>{human(part)}</dt>
                          <dd>{shown(n, part === "count" ? "count" : unit)}</dd>
                        </div>
                      ))}
                    </dl>
                  </div>
                )
              return null
            })}
          </div>
        </section>
      ))}
  </div>
)

/** One metric's days as bars in plain SVG, with its total and peak in the caption and each bar's value in its title. */
const Chart = (props: { token: string; metric: Metric }) => {
  const series = useLoad(
    () =>
      call(props.token, (client) =>
        client.analytics.timeseries({ query: { tz: zone, metric: props.metric, interval: "day" } })
      ),
    [props.token, props.metric]
  )
  const label = `${human(props.metric)} by day`
  if (series.data === undefined)
    return series.error === undefined ? <Loading what={label.toLowerCase()} /> : <ErrorText error={series.error} />
  const points = series.data.points
  const peak = Math.max(0, ...points.map((point) => point.value))
  // The scale of an empty series is 1, so its bars are flat rather than undefined.
  const max = Math.max(1, peak)
  const total = points.reduce((sum, point) => sum + point.value, 0)
  const width = 600
  const height = 140
  const left = 28
  const step = (width - left) / Math.max(1, points.length)
  return (
    <figure class="chart">
      <figcaption>
        <strong>{human(props.metric)}</strong>{" "}
        <span class="muted">
          {total.toLocaleString()} in all, at most {peak.toLocaleString()} a day
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height + 22}`} role="img" aria-label={label}>
        <text x={left - 4} y={10} class="tick" text-anchor="end">
          {max}
        </text>
        <text x={left - 4} y={height} class="tick" text-anchor="end">
          0
        </text>
        <line x1={left} y1={0} x2={width} y2={0} class="grid" />
        {points.map((point, index) => {
          const h = Math.round((point.value / max) * height)
          return (
            <rect
              key={point.start}
              x={left + index * step + 1}
              y={height - h}
              width={Math.max(1, step - 2)}
              height={h}
              class="bar"
            >
              <title>
                {day(point.start)}: {point.value}
              </title>
            </rect>
          )
        })}
        <line x1={left} y1={height} x2={width} y2={height} class="axis" />
        <text x={left} y={height + 16} class="tick">
          {points[0] === undefined ? "" : day(points[0].start)}
        </text>
        <text x={width} y={height + 16} class="tick" text-anchor="end">
          {points.at(-1) === undefined ? "" : day(points.at(-1)!.start)}
        </text>
      </svg>
    </figure>
  )
}

/** The account's numbers over the last 30 days, in this browser's time zone: cards, then a chart a metric. */
export const Analytics = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const summary = useLoad(() => call(token, (client) => client.analytics.summary({ query: { tz: zone } })), [token])
  return (
    <Page title="Analytics">
      <p class="muted">
        The last 30 days
        {summary.data === undefined ? "" : ` (${summary.data.from} to ${summary.data.to})`}, by day in your browser's
        time zone, <strong>{zone}</strong>.
      </p>
      {summary.loading && summary.data === undefined ? <Loading what="the summary" /> : null}
      <ErrorText error={summary.error} />
      {summary.data === undefined ? null : <Cards summary={summary.data as unknown as Record<string, unknown>} />}
      <h2>By day</h2>
      <div class="charts">
        {MetricName.literals
          // Revenue is per currency (it needs one named): its totals are in the cards.
          .filter((name) => name !== "revenue")
          .map((name) => (
            <Chart key={name} token={token} metric={name} />
          ))}
      </div>
    </Page>
  )
}

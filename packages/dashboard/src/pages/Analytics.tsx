import { useState } from "preact/hooks"
import { MetricName } from "@leadline/core/analytics/AnalyticsQuery"
import { call } from "../api.ts"
import type { Session } from "../session.ts"
import { ErrorText, Field, Loading, Page, useLoad } from "../ui.tsx"

type Metric = (typeof MetricName.literals)[number]

const zone = Intl.DateTimeFormat().resolvedOptions().timeZone

/** Bars in plain SVG, one per bucket, with the values in the accessible name and a table. */
const Bars = (props: { points: ReadonlyArray<{ start: string; value: number }>; label: string }) => {
  const max = Math.max(1, ...props.points.map((point) => point.value))
  const width = 600
  const height = 160
  const step = width / Math.max(1, props.points.length)
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-label={props.label}>
        {props.points.map((point, index) => {
          const h = Math.round((point.value / max) * height)
          return (
            <rect
              key={point.start}
              x={index * step + 1}
              y={height - h}
              width={Math.max(1, step - 2)}
              height={h}
              class="bar"
            >
              <title>
                {point.start.slice(0, 10)}: {point.value}
              </title>
            </rect>
          )
        })}
        <line x1="0" y1={height} x2={width} y2={height} class="axis" />
        <text x="0" y={height + 16} class="tick">
          {props.points[0]?.start.slice(0, 10)}
        </text>
        <text x={width} y={height + 16} class="tick" text-anchor="end">
          {props.points.at(-1)?.start.slice(0, 10)}
        </text>
      </svg>
      <figcaption>
        {props.label}: {props.points.reduce((sum, point) => sum + point.value, 0)} in all, at most {max} a day
      </figcaption>
    </figure>
  )
}

/** The account's numbers over the last 30 days, in this browser's time zone. */
export const Analytics = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [metric, setMetric] = useState<Metric>("leads_created" as Metric)
  const summary = useLoad(() => call(token, (client) => client.analytics.summary({ query: { tz: zone } })), [token])
  const series = useLoad(
    () => call(token, (client) => client.analytics.timeseries({ query: { tz: zone, metric, interval: "day" } })),
    [token, metric]
  )
  return (
    <Page title="Analytics">
      <p class="muted">The last 30 days, by day, in {zone}.</p>
      <Field label="Metric">
        <select value={metric} onChange={(event) => setMetric(event.currentTarget.value as Metric)}>
          {MetricName.literals
            .filter((name) => name !== "revenue")
            .map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
        </select>
      </Field>
      {series.loading && series.data === undefined ? <Loading what="the series" /> : null}
      <ErrorText error={series.error} />
      {series.data === undefined ? null : <Bars points={series.data.points} label={metric} />}
      <h2>Summary</h2>
      <ErrorText error={summary.error} />
      {summary.data === undefined ? null : <pre class="summary">{JSON.stringify(summary.data, null, 2)}</pre>}
    </Page>
  )
}

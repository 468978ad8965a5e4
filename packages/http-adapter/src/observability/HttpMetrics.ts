import { Context, Effect, Metric } from "effect"
import { HttpRouter } from "effect/http"
import { REQUEST_SECONDS } from "@leadline/core/observability/OpsMetrics"

/**
 * The HTTP metrics of docs/observability.md §B2, recorded once per request by the envelope
 * (so 413, 415, 503 and unmatched routes count too). `route` is the pattern the router matched,
 * written by `label`, a route middleware, into the request's `Labels`; `unmatched` otherwise.
 * Tagged series are made once per label set and updated synchronously: about 0.1 µs a request.
 */

/** The request's labels as the routes learn them; undefined while metrics are off. */
export interface Labels {
  route: string
  /** False for `/metrics` itself, which stays out of its own numbers. */
  record: boolean
}

export const CurrentLabels = Context.Reference<Labels | undefined>("leadline/HttpMetricsLabels", {
  defaultValue: () => undefined
})

/** Writes the matched route's pattern into the request's labels. Provide it to every group of routes. */
export const label = HttpRouter.middleware((handler) =>
  Effect.withFiber((fiber) => {
    const labels = Context.get(fiber.context, CurrentLabels)
    if (labels !== undefined) labels.route = Context.getUnsafe(fiber.context, HttpRouter.RouteContext).route.path
    return handler
  })
).layer

interface Series {
  readonly requests: Metric.Counter<number>
  readonly duration: Metric.Histogram<number>
}

const series = new Map<string, Series>()

const seriesOf = (route: string, method: string, status: number): Series => {
  const key = `${method} ${status} ${route}`
  let found = series.get(key)
  if (found === undefined) {
    const attributes = { route, method, status: String(status) }
    found = {
      requests: Metric.counter("leadline_http_requests_total", {
        description: "HTTP requests answered, by route pattern, method and status",
        incremental: true,
        attributes
      }),
      duration: Metric.histogram("leadline_http_request_duration_seconds", {
        description: "Time to answer an HTTP request, by route pattern, method and status",
        boundaries: REQUEST_SECONDS,
        attributes
      })
    }
    series.set(key, found)
  }
  return found
}

export const inFlight = Metric.gauge("leadline_http_requests_in_flight", {
  description: "HTTP requests being answered now"
})

/** One request answered: counted and timed under its labels. `context` carries the registry. */
export const record = (
  context: Context.Context<never>,
  labels: Labels,
  method: string,
  status: number,
  seconds: number
): void => {
  if (!labels.record) return
  const { requests, duration } = seriesOf(labels.route, method, status)
  requests.updateUnsafe(1, context)
  duration.updateUnsafe(seconds, context)
}

import { Effect, Metric } from "effect"

/**
 * The operator's counters that the core and the workers move (docs/observability.md §B2: names
 * and labels are binding). Labels never carry an account, key, lead or URL. The HTTP metrics
 * live with the transport (`@leadline/http-adapter/observability`); `/metrics` renders them all
 * from the same registry.
 */

export const webhookOutcomes = ["success", "http_4xx", "http_5xx", "timeout", "network", "blocked"] as const
export type WebhookOutcome = (typeof webhookOutcomes)[number]

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Buckets for what takes a millisecond to seconds: an HTTP request, a unit of work. */
export const REQUEST_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

const byLabel = <const L extends string, M>(values: ReadonlyArray<L>, make: (value: L) => M): Record<L, M> =>
  Object.fromEntries(values.map((value) => [value, make(value)])) as Record<L, M>

export const webhookAttempts = byLabel(webhookOutcomes, (outcome) =>
  Metric.counter("leadline_webhook_attempts_total", {
    description: "Webhook delivery attempts, by outcome",
    incremental: true,
    attributes: { outcome }
  })
)

export const webhookAttemptDuration = byLabel(webhookOutcomes, (outcome) =>
  Metric.histogram("leadline_webhook_attempt_duration_seconds", {
    description: "How long a webhook delivery attempt took, by outcome",
    boundaries: SECONDS,
    attributes: { outcome }
  })
)

export const deliveriesFinished = byLabel(["delivered", "failed"] as const, (result) =>
  Metric.counter("leadline_webhook_deliveries_finished_total", {
    description: "Webhook deliveries that reached a final state, by result",
    incremental: true,
    attributes: { result }
  })
)

export const deliveryLag = Metric.histogram("leadline_webhook_delivery_lag_seconds", {
  description: "From when a delivery fell due to when a worker claimed it",
  boundaries: SECONDS
})

export const idempotencyResults = ["new", "replayed", "in_progress", "key_reused"] as const
export type IdempotencyResult = (typeof idempotencyResults)[number]

export const idempotencyRequests = byLabel(idempotencyResults, (result) =>
  Metric.counter("leadline_idempotency_requests_total", {
    description: "Requests with an Idempotency-Key, by what the key did",
    incremental: true,
    attributes: { result }
  })
)

export const rateLimited = Metric.counter("leadline_rate_limited_total", {
  description: "Requests refused with 429 by a rate limit (per key, or the WhatsApp webhook's per address)",
  incremental: true
})

const messageSeries = new Map<string, Metric.Counter<number>>()

/** Messages stored (inbound `received`, outbound `queued`) and their later statuses, by direction and status. */
export const messages = (direction: "inbound" | "outbound", status: string): Metric.Counter<number> => {
  const key = `${direction} ${status}`
  let metric = messageSeries.get(key)
  if (metric === undefined) {
    metric = Metric.counter("leadline_messages_total", {
      description: "Messages by direction and the status they reached",
      incremental: true,
      attributes: { direction, status }
    })
    messageSeries.set(key, metric)
  }
  return metric
}

/** Counts messages of one direction that reached these statuses (one entry per message). */
export const countMessages = (direction: "inbound" | "outbound", statuses: ReadonlyArray<string>) =>
  statuses.length === 0
    ? Effect.void
    : Effect.forEach(statuses, (status) => Metric.update(messages(direction, status), 1), { discard: true })

/** Every labelled series above at zero, so a scrape shows them before their first event. */
export const preregistered: ReadonlyArray<Metric.Metric<number, unknown>> = [
  ...Object.values(webhookAttempts),
  ...Object.values(deliveriesFinished),
  ...Object.values(idempotencyRequests),
  rateLimited
]

/** `GET /api/v1/stream` connections open on this server (its fan-out's subscribers). */
export const streamsOpen = Metric.gauge("leadline_event_streams_open", {
  description: "Event streams (GET /api/v1/stream) open on this server"
})

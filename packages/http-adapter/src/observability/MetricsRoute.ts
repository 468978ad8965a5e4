import { createHash, timingSafeEqual } from "node:crypto"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { Clock, Context, Effect, Metric, Option, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { OutboundQueue } from "@leadline/core/messages/OutboundQueue"
import type { Backlog } from "@leadline/core/observability/Backlog"
import * as OpsMetrics from "@leadline/core/observability/OpsMetrics"
import { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import { toResponse } from "../ErrorMapping.ts"
import { Readiness } from "../Health.ts"
import { Unauthorized } from "../WireErrors.ts"
import { CurrentLabels } from "./HttpMetrics.ts"

export const METRICS_PATH = "/metrics"

/**
 * `/metrics`: Prometheus text, only with `Authorization: Bearer <LEADLINE_METRICS_TOKEN>` (the
 * admin token is not reused in scrape configs); without a token set the route does not exist
 * (404). A scrape first reads the queues and the database, each within a second.
 */
export const MetricsSettings = Context.Reference<{
  readonly token: Redacted.Redacted<string> | undefined
  /** For `leadline_build_info{version}`. */
  readonly version: string
}>("leadline/MetricsSettings", { defaultValue: () => ({ token: undefined, version: "dev" }) })

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const gauge = (name: string, description: string, attributes?: Record<string, string>) =>
  Metric.gauge(name, { description, ...(attributes === undefined ? {} : { attributes }) })

const outboxDue = gauge("leadline_outbox_due", "Webhook deliveries due now and not yet sent")
const outboxAge = gauge(
  "leadline_outbox_oldest_due_age_seconds",
  "How long the longest-waiting due webhook delivery has waited"
)
const senderDue = gauge("leadline_sender_due", "Outbound messages due now and not yet sent")
const senderAge = gauge("leadline_sender_oldest_due_age_seconds", "How long the longest-waiting due message has waited")
const dbUp = gauge("leadline_db_up", "1 when the database answered the scrape's ping within a second")
const memory = gauge("process_resident_memory_bytes", "Resident memory of the process")
const started = gauge("process_start_time_seconds", "When the process started, in seconds since the epoch")
const cpu = Metric.counter("process_cpu_seconds_total", { description: "CPU time the process has used" })
const loopDelay = (quantile: string) =>
  gauge("nodejs_eventloop_delay_seconds", "Event loop delay over the last scrape interval", { quantile })
const loopDelays = [
  [50, loopDelay("0.5")],
  [90, loopDelay("0.9")],
  [99, loopDelay("0.99")]
] as const

const digest = (value: string) => createHash("sha256").update(value).digest()

export const routes = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const settings = yield* MetricsSettings
    if (settings.token === undefined) return
    const expected = digest(`Bearer ${Redacted.value(settings.token)}`)
    const deliveries = yield* DeliveryQueue
    const outbound = yield* OutboundQueue
    const readiness = yield* Readiness
    const unauthorized = toResponse(new Unauthorized({ error: "Invalid or missing metrics token" }))
    const context = (yield* Effect.context<never>()) as Context.Context<never>
    // Series with known labels exist from the start, at zero.
    for (const metric of OpsMetrics.preregistered) metric.updateUnsafe(0, context)
    Metric.gauge("leadline_build_info", {
      description: "The running version, as a label",
      attributes: { version: settings.version }
    }).updateUnsafe(1, context)
    started.updateUnsafe(Math.round(Date.now() / 1000 - process.uptime()), context)
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    yield* Effect.addFinalizer(() => Effect.sync(() => delay.disable()))
    let cpuSeconds = 0

    const backlog = (read: Effect.Effect<Backlog>, due: Metric.Gauge<number>, age: Metric.Gauge<number>, now: number) =>
      Effect.map(Effect.timeoutOption(read, "1 second"), (found) =>
        Option.map(found, (queue) => {
          due.updateUnsafe(queue.due, context)
          age.updateUnsafe(queue.oldestDueAt === undefined ? 0 : Math.max(0, (now - queue.oldestDueAt) / 1000), context)
        })
      )

    const refresh = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const [up] = yield* Effect.all(
        [
          Effect.timeoutOption(readiness.check, "1 second"),
          backlog(deliveries.backlog(now), outboxDue, outboxAge, now),
          backlog(outbound.backlog(now), senderDue, senderAge, now)
        ],
        { concurrency: "unbounded" }
      )
      dbUp.updateUnsafe(Option.getOrElse(up, () => false) ? 1 : 0, context)
      memory.updateUnsafe(process.memoryUsage.rss(), context)
      const usage = process.cpuUsage()
      const total = (usage.user + usage.system) / 1e6
      cpu.updateUnsafe(total - cpuSeconds, context)
      cpuSeconds = total
      for (const [percentile, metric] of loopDelays) metric.updateUnsafe(delay.percentile(percentile) / 1e9, context)
      delay.reset()
    })

    yield* router.add(
      "GET",
      METRICS_PATH,
      Effect.gen(function* () {
        const labels = yield* CurrentLabels
        if (labels !== undefined) labels.record = false
        const request = yield* HttpServerRequest.HttpServerRequest
        const sent = request.headers.authorization
        // Comparing fixed-length digests keeps the check constant-time whatever was sent.
        if (sent === undefined || !timingSafeEqual(digest(sent), expected)) return unauthorized
        yield* refresh
        return HttpServerResponse.text(PrometheusMetrics.formatUnsafe(context), { contentType: CONTENT_TYPE })
      })
    )
  })
)

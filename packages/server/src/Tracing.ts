import { Config, Layer, Option } from "effect"
import { FetchHttpClient, HttpMiddleware } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"

/**
 * OTLP traces, as OpenTelemetry's own variables ask for them: `OTEL_TRACES_EXPORTER` naming
 * `otlp` and an endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT`
 * with `/v1/traces`); `OTEL_SDK_DISABLED=true` turns them off. The other `OTEL_*` settings
 * (headers, `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_SERVICE_NAME`) are read by effect's exporter.
 */
export const OtlpConfig = Config.all({
  exporter: Config.String("OTEL_TRACES_EXPORTER").pipe(Config.withDefault("")),
  tracesEndpoint: Config.option(Config.String("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  endpoint: Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT")),
  disabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  serviceName: Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("leadline"))
}).pipe(
  Config.map((otel) => ({
    enabled:
      !otel.disabled &&
      otel.exporter
        .split(",")
        .map((name) => name.trim().toLowerCase())
        .includes("otlp") &&
      (Option.isSome(otel.tracesEndpoint) || Option.isSome(otel.endpoint)),
    serviceName: otel.serviceName
  }))
)

export type OtlpConfig = Config.Success<typeof OtlpConfig>

// Probes and scrapes would bury the requests worth a look.
const UNTRACED = new Set(["/metrics", "/healthz", "/readyz"])

/** The exporter and what it leaves out; empty when traces are not asked for. */
export const layer = (otlp: OtlpConfig, version: string) =>
  otlp.enabled
    ? Layer.mergeAll(
        OtlpTracer.layerFromConfig({ resource: { serviceName: otlp.serviceName, serviceVersion: version } }).pipe(
          Layer.provide([OtlpSerialization.layerJson, FetchHttpClient.layer])
        ),
        Layer.succeed(HttpMiddleware.TracerDisabledWhen, (request) => UNTRACED.has(request.url.split("?", 1)[0]!))
      )
    : Layer.empty

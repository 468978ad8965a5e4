import { Config, Effect, Option, Redacted, References, Schema, SchemaGetter } from "effect"
import * as OpenApiDocument from "@leadline/http-adapter/OpenApiDocument"
import * as Logging from "./Logging.ts"
import { MediaConfig } from "./MediaConfig.ts"
import * as Tracing from "./Tracing.ts"
import * as TrustedProxies from "./TrustedProxies.ts"
import { VERSION } from "./Version.ts"

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "none"] as const
type LogLevel = (typeof LOG_LEVELS)[number]

// The spellings other tools use for the same levels; any case is accepted.
const LOG_LEVEL_ALIASES: Record<string, LogLevel> = {
  ...Object.fromEntries(LOG_LEVELS.map((level) => [level, level])),
  warning: "warn",
  err: "error",
  critical: "fatal",
  off: "none",
  silent: "none",
  all: "trace"
}
const logLevelOf = (input: string): LogLevel | undefined => LOG_LEVEL_ALIASES[input.trim().toLowerCase()]

export const LOG_LEVEL_HELP = `LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")} (any case; also ${Object.keys(
  LOG_LEVEL_ALIASES
)
  .filter((alias) => !(LOG_LEVELS as ReadonlyArray<string>).includes(alias))
  .join(", ")})`

const LogLevelSetting = Schema.String.check(
  Schema.makeFilter((input: string) => logLevelOf(input) !== undefined || LOG_LEVEL_HELP)
).pipe(
  Schema.decodeTo(Schema.Literals(LOG_LEVELS), {
    decode: SchemaGetter.transform((input: string) => logLevelOf(input)!),
    encode: SchemaGetter.transform((level: LogLevel) => level)
  })
)

/** An absolute http(s) URL without query or fragment: checked at start, with the reason. */
const PublicUrl = Schema.String.check(
  Schema.makeFilter((input: string) => {
    try {
      OpenApiDocument.publicServerUrl(input)
      return true
    } catch (error) {
      return `LEADLINE_PUBLIC_URL: ${(error as Error).message}`
    }
  })
)

/** Settings from the environment; every one has a default that works locally. */
export const ServerConfig = Config.all({
  // 0 asks the OS for a free port (the log says which), for tests and side-by-side runs.
  port: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 })), "PORT").pipe(
    Config.withDefault(3000)
  ),
  host: Config.String("HOST").pipe(Config.withDefault("0.0.0.0")),
  // Where clients reach the API, for the OpenAPI document's `servers`; unset: each request's own origin.
  publicUrl: Config.option(Config.schema(PublicUrl, "LEADLINE_PUBLIC_URL")),
  dataDir: Config.String("LEADLINE_DATA_DIR").pipe(Config.withDefault("./data")),
  // Empty (`DATABASE_URL=` in an env file) is unset: the embedded database.
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")).pipe(
    Config.map(Option.filter((url) => Redacted.value(url).trim() !== ""))
  ),
  databasePoolSize: Config.Int("LEADLINE_DB_POOL_SIZE").pipe(Config.withDefault(10)),
  shutdownGraceSeconds: Config.Int("LEADLINE_SHUTDOWN_GRACE_SECONDS").pipe(Config.withDefault(10)),
  // Quiet seconds after work before the heap is trimmed (HeapTrim.ts); 0: never.
  heapTrimQuietSeconds: Config.Int("LEADLINE_HEAP_TRIM_SECONDS").pipe(Config.withDefault(2)),
  allowPrivateWebhookUrls: Config.Boolean("WEBHOOK_ALLOW_PRIVATE_URLS").pipe(Config.withDefault(false)),
  workerEnabled: Config.Boolean("WEBHOOK_WORKER_ENABLED").pipe(Config.withDefault(true)),
  workerConcurrency: Config.Int("WEBHOOK_CONCURRENCY").pipe(Config.withDefault(32)),
  workerPollMillis: Config.Int("WEBHOOK_POLL_INTERVAL_MS").pipe(Config.withDefault(1000)),
  workerLeaseSeconds: Config.Int("WEBHOOK_LEASE_SECONDS").pipe(Config.withDefault(30)),
  workerDisableAfterHours: Config.Number("WEBHOOK_DISABLE_AFTER_HOURS").pipe(Config.withDefault(120)),
  // `leadline worker`'s scheduling priority (nice): below the servers', whose requests come first on a shared host.
  workerNice: Config.schema(
    Schema.Int.check(Schema.isBetween({ minimum: -20, maximum: 19 })),
    "LEADLINE_WORKER_NICE"
  ).pipe(Config.withDefault(10)),
  adminToken: Config.option(Config.Redacted("LEADLINE_ADMIN_TOKEN")),
  // The keyring that seals provider secrets at rest (Secrets.ts reads it); empty is unset: unsealed.
  encryptionKey: Config.option(Config.Redacted("LEADLINE_ENCRYPTION_KEY")).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).trim() !== ""))
  ),
  maxBodyBytes: Config.Int("LEADLINE_MAX_BODY_BYTES").pipe(Config.withDefault(1024 * 1024)),
  rateLimit: Config.Int("LEADLINE_RATE_LIMIT").pipe(Config.withDefault(1200)),
  rateLimitWindowSeconds: Config.Int("LEADLINE_RATE_LIMIT_WINDOW_SECONDS").pipe(Config.withDefault(60)),
  redisUrl: Config.option(Config.Redacted("REDIS_URL")),
  // Refused requests (bad signature or token, body over the limit) one address may make to the WhatsApp webhook a minute; 0: no limit.
  whatsappWebhookRateLimit: Config.schema(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    "WHATSAPP_WEBHOOK_RATE_LIMIT"
  ).pipe(Config.withDefault(60)),
  // The proxies whose X-Forwarded-For names the client; empty: the socket's peer is the client.
  trustedProxies: Config.schema(TrustedProxies.Setting, "LEADLINE_TRUSTED_PROXIES").pipe(Config.withDefault("")),
  requestTimeoutSeconds: Config.Int("LEADLINE_REQUEST_TIMEOUT_SECONDS").pipe(Config.withDefault(30)),
  // GET /api/v1/stream: the idle heartbeat, and the events a connection may fall behind by before its reset.
  streamHeartbeatSeconds: Config.schema(
    Schema.Finite.check(Schema.isGreaterThan(0)),
    "LEADLINE_STREAM_HEARTBEAT_SECONDS"
  ).pipe(Config.withDefault(15)),
  streamBuffer: Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), "LEADLINE_STREAM_BUFFER").pipe(
    Config.withDefault(1000)
  ),
  tracing: Config.Boolean("LEADLINE_TRACING").pipe(Config.withDefault(false)),
  otlp: Tracing.OtlpConfig,
  // `/metrics` exists only with a token; the recording itself stays on unless LEADLINE_METRICS=false.
  metricsToken: Config.option(Config.Redacted("LEADLINE_METRICS_TOKEN")).pipe(
    Config.map(Option.filter((token) => Redacted.value(token).trim() !== ""))
  ),
  metrics: Config.Boolean("LEADLINE_METRICS").pipe(Config.withDefault(true)),
  // The built dashboard served at /dashboard; unset: the one `npm install` builds in packages/dashboard/dist.
  dashboardDir: Config.option(Config.String("LEADLINE_DASHBOARD_DIR")),
  logLevel: Config.schema(LogLevelSetting, "LOG_LEVEL").pipe(Config.withDefault("info" as const)),
  logFormat: Config.schema(Schema.Literals(Logging.LOG_FORMATS), "LOG_FORMAT").pipe(
    Config.withDefault("pretty" as const)
  ),
  whatsappTransport: Config.schema(Schema.Literals(["simulator", "cloud"]), "WHATSAPP_TRANSPORT").pipe(
    Config.withDefault("simulator" as const)
  ),
  whatsappAppSecret: Config.option(Config.Redacted("WHATSAPP_APP_SECRET")),
  whatsappVerifyToken: Config.option(Config.Redacted("WHATSAPP_VERIFY_TOKEN")),
  whatsappSendRate: Config.schema(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)), "WHATSAPP_SEND_RATE").pipe(
    Config.withDefault(20)
  ),
  senderEnabled: Config.Boolean("WHATSAPP_SENDER_ENABLED").pipe(Config.withDefault(true)),
  senderLeaseSeconds: Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), "WHATSAPP_SENDER_LEASE_SECONDS").pipe(
    Config.withDefault(30)
  ),
  media: MediaConfig,
  // How often each business account's templates are synced from Meta; 0: only on demand.
  templatesSyncSeconds: Config.schema(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    "WHATSAPP_TEMPLATES_SYNC_SECONDS"
  ).pipe(Config.withDefault(900))
})

export type ServerConfig = Config.Success<typeof ServerConfig>

export const adminTokenFromEnv = (config: ServerConfig): Redacted.Redacted<string> | undefined =>
  Option.getOrUndefined(config.adminToken)

export const logLevelName = {
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  error: "Error",
  fatal: "Fatal",
  none: "None"
} as const

/** The log level and tracing switch of the configuration, for a process's whole program (server or worker). */
export const withSettings =
  (config: ServerConfig) =>
  <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    program.pipe(
      Effect.provideService(References.MinimumLogLevel, logLevelName[config.logLevel]),
      // Spans cost on every request and statement: made when asked for or exported.
      Effect.provideService(References.TracerEnabled, config.tracing || config.otlp.enabled),
      Effect.provide(Tracing.layer(config.otlp, VERSION)),
      Effect.provide(Logging.loggers(config.logFormat))
    )

export const databaseConfig = (config: ServerConfig) => ({
  url: Option.getOrUndefined(config.databaseUrl),
  dataDir: config.dataDir,
  maxConnections: config.databasePoolSize
})

export const workerOptions = (config: ServerConfig) => ({
  concurrency: config.workerConcurrency,
  pollInterval: `${config.workerPollMillis} millis` as const,
  lease: `${config.workerLeaseSeconds} seconds` as const,
  disableAfter: `${Math.max(0, config.workerDisableAfterHours) * 3600} seconds` as const
})

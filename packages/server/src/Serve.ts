import { createServer } from "@leadline/http-adapter/NodeServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, Option } from "effect"
import { HttpRouter } from "effect/http"
import { AdminToken } from "@leadline/http-adapter/admin/AdminAuthentication"
import { Readiness } from "@leadline/http-adapter/Health"
import { MetricsSettings } from "@leadline/http-adapter/observability/MetricsRoute"
import * as Server from "@leadline/http-adapter/Server"
import { Database } from "@leadline/sql-adapter/Database"
import { resolveToken } from "./AdminTokenFile.ts"
import * as Composition from "./Composition.ts"
import { adminTokenFromEnv, databaseConfig, ServerConfig, withSettings } from "./Config.ts"
import * as Deployment from "./Deployment.ts"
import * as MediaConfig from "./MediaConfig.ts"
import * as Dashboard from "./Dashboard.ts"
import * as HeapTrim from "./HeapTrim.ts"
import * as RateLimits from "./RateLimits.ts"
import { VERSION } from "./Version.ts"
import * as Secrets from "./Secrets.ts"
import * as TrustedProxies from "./TrustedProxies.ts"
import * as WhatsApp from "./WhatsApp.ts"

const readinessFromDatabase = Layer.effect(
  Readiness,
  Effect.map(Database, (database) => Readiness.of({ check: database.ping }))
)

/**
 * Runs the API server until interrupted, configured from the environment: on
 * `DATABASE_URL` when set, else on the embedded database in the data directory.
 * The webhook worker runs inside it unless `WEBHOOK_WORKER_ENABLED=false`.
 * On SIGTERM it stops accepting, lets requests in flight finish (up to the grace
 * period), then closes the database.
 */
export const serve = Effect.flatMap(ServerConfig, (config) => serveWith(config).pipe(withSettings(config)))

// Every line the server logs, from the first, in the configured level and format.
const serveWith = (config: ServerConfig) =>
  Effect.gen(function* () {
    // A malformed keyring stops the server before it writes anything.
    const keyring = yield* Secrets.keyring(config)
    const adminToken = yield* resolveToken(config.dataDir, adminTokenFromEnv(config))
    const metaApp = yield* WhatsApp.metaApp(config)
    const database = databaseConfig(config)
    const dashboardDist = Option.getOrElse(config.dashboardDir, Dashboard.defaultDist)
    const app = Composition.api({
      routes: {
        maxBodyBytes: config.maxBodyBytes,
        uploadMaxBodyBytes: MediaConfig.uploadMaxBodyBytes(config.media),
        requestTimeoutSeconds: config.requestTimeoutSeconds,
        metrics: config.metrics,
        publicUrl: Option.getOrUndefined(config.publicUrl),
        trustedProxies: TrustedProxies.networks(config.trustedProxies)
      },
      dashboardDir: dashboardDist,
      ...Deployment.loopOptions(config, { webhooks: config.workerEnabled, media: config.media.fetcherEnabled })
    }).pipe(
      // The transport serves the sender and, in simulator mode, the operator's customer route.
      Layer.provide(WhatsApp.transport(config)),
      Layer.provide(WhatsApp.mediaDownloader(config)),
      Layer.provide(RateLimits.layer(config)),
      Layer.provide(
        Layer.succeed(MetricsSettings, { token: Option.getOrUndefined(config.metricsToken), version: VERSION })
      ),
      Layer.provide(Layer.succeed(AdminToken, adminToken)),
      Layer.provide(readinessFromDatabase)
    )
    // The per-request access log is off: it costs on the hot path; errors are logged with their request id.
    // The database is opened and migrated before the port opens; the server answers 503 for the moment
    // between the port opening and the routes being attached (NodeServer.ts).
    const server = HttpRouter.serve(app, { disableLogger: true }).pipe(
      Layer.provide(
        NodeHttpServer.layer(createServer, {
          port: config.port,
          host: config.host,
          gracefulShutdownTimeout: `${config.shutdownGraceSeconds} seconds`
        })
      ),
      Layer.provideMerge(Deployment.stores(config, metaApp, keyring))
    )
    yield* Effect.logInfo(
      database.url === undefined
        ? `Database: embedded PGlite in ${config.dataDir}`
        : "Database: PostgreSQL from DATABASE_URL"
    )
    yield* Effect.logInfo(
      config.whatsappTransport === "cloud"
        ? "WhatsApp: Meta's Cloud API; point your app's webhook at /webhooks/whatsapp"
        : "WhatsApp: the simulator (offline); play a customer with POST /admin/v1/simulator/whatsapp/inbound"
    )
    yield* Effect.logInfo(`Leadline API docs at http://localhost:${config.port}${Server.DOCS_PATH}`)
    yield* Dashboard.isBuilt(dashboardDist)
      ? Effect.logInfo(`Dashboard at http://localhost:${config.port}${Dashboard.DASHBOARD_PATH}/`)
      : Effect.logWarning(`Dashboard not built (no ${dashboardDist}): run npm run build:dashboard in the repository`)
    // Quiet after start-up or a burst of requests, the heap gives back what the work grew.
    if (config.heapTrimQuietSeconds > 0) {
      yield* Effect.forkChild(HeapTrim.whenQuiet({ quietSeconds: config.heapTrimQuietSeconds }))
    }
    return yield* Layer.launch(server)
  })

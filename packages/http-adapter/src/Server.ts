import { Layer } from "effect"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import * as AdminAuthentication from "./admin/AdminAuthenticationMiddleware.ts"
import * as AdminHandlers from "./admin/AdminHandlers.ts"
import { Api } from "./Api.ts"
import * as Health from "./Health.ts"
import * as Authentication from "./AuthenticationMiddleware.ts"
import * as Idempotent from "./IdempotentMiddleware.ts"
import * as IdentityHandlers from "./identity/IdentityHandlers.ts"
import * as KeysHandlers from "./keys/KeysHandlers.ts"
import * as CampaignsHandlers from "./campaigns/CampaignsHandlers.ts"
import * as CatalogueHandlers from "./catalogue/CatalogueHandlers.ts"
import * as OrderNoticesHandlers from "./orders/OrderNoticesHandlers.ts"
import * as OrdersHandlers from "./orders/OrdersHandlers.ts"
import * as AnalyticsHandlers from "./analytics/AnalyticsHandlers.ts"
import * as KnowledgeHandlers from "./knowledge/KnowledgeHandlers.ts"
import * as AgentsHandlers from "./agents/AgentsHandlers.ts"
import * as AiHandlers from "./ai/AiHandlers.ts"
import * as ChannelsHandlers from "./channels/ChannelsHandlers.ts"
import * as ConversationsHandlers from "./conversations/ConversationsHandlers.ts"
import * as MessagesHandlers from "./messages/MessagesHandlers.ts"
import * as WhatsAppWebhook from "./whatsapp/WhatsAppWebhook.ts"
import * as LeadsHandlers from "./leads/LeadsHandlers.ts"
import * as HttpMetrics from "./observability/HttpMetrics.ts"
import * as MetricsRoute from "./observability/MetricsRoute.ts"
import * as RequestEnvelope from "./RequestEnvelope.ts"
import * as RequestErrors from "./RequestErrors.ts"
import * as WebhooksHandlers from "./webhooks/WebhooksHandlers.ts"

export const OPENAPI_PATH = "/api/openapi.json"
export const DOCS_PATH = "/docs"

export interface Options {
  /** Largest accepted request body; 1 MiB unless set. */
  readonly maxBodyBytes?: number | undefined
  /** How long an API request may take before it is answered 503; 30 s unless set. */
  readonly requestTimeoutSeconds?: number | undefined
  /** Records the HTTP metrics `/metrics` serves; on unless false (`LEADLINE_METRICS=false`, for benchmarks). */
  readonly metrics?: boolean | undefined
}

const apiRoutes = HttpApiBuilder.layer(Api, { openapiPath: OPENAPI_PATH }).pipe(
  Layer.provide([
    // One line per resource, as its group is in Api.ts:
    IdentityHandlers.layer,
    KeysHandlers.layer,
    LeadsHandlers.layer,
    WebhooksHandlers.layer,
    ChannelsHandlers.layer,
    ConversationsHandlers.layer,
    MessagesHandlers.layer,
    CampaignsHandlers.layer,
    CatalogueHandlers.layer,
    OrdersHandlers.layer,
    OrderNoticesHandlers.layer,
    AnalyticsHandlers.layer,
    KnowledgeHandlers.layer,
    AgentsHandlers.layer,
    AiHandlers.layer,
    AdminHandlers.layer
  ]),
  Layer.provide([Authentication.layer, AdminAuthentication.layer, Idempotent.layer, RequestErrors.layer])
)

/**
 * Every route of the API, its OpenAPI document and docs page, and the request
 * envelope, and the health checks. Needs the core services, the admin token and
 * a `Readiness` (and, for per-key limits, `RateLimit.Settings` with a
 * `RateLimiter`); serve it with `HttpRouter.serve` on any HTTP server.
 */
export const routes = (options: Options = {}) =>
  Layer.mergeAll(
    apiRoutes.pipe(
      Layer.provide(
        RequestEnvelope.bodyGuard(
          options.maxBodyBytes ?? RequestEnvelope.DEFAULT_MAX_BODY_BYTES,
          options.requestTimeoutSeconds ?? 30
        )
      )
    ),
    HttpApiScalar.layer(Api, { path: DOCS_PATH }),
    Health.routes,
    WhatsAppWebhook.routes,
    MetricsRoute.routes
  ).pipe(
    // Every route names its pattern for the HTTP metrics; the envelope around them records them.
    Layer.provide(HttpMetrics.label),
    Layer.merge(RequestEnvelope.envelope({ metrics: options.metrics ?? true }))
  )

import { Effect, Layer, Scope } from "effect"
import { HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type * as IpNetwork from "effect/net/IpNetwork"
import { HttpApiBuilder, HttpApiScalar, OpenApi } from "effect/http-api"
import * as AdminAuthentication from "./admin/AdminAuthenticationMiddleware.ts"
import * as AdminHandlers from "./admin/AdminHandlers.ts"
import { Api } from "./Api.ts"
import * as Health from "./Health.ts"
import * as Authentication from "./AuthenticationMiddleware.ts"
import * as Idempotent from "./IdempotentMiddleware.ts"
import * as OpenApiDocument from "./OpenApiDocument.ts"
import * as IdentityHandlers from "./identity/IdentityHandlers.ts"
import * as KeysHandlers from "./keys/KeysHandlers.ts"
import * as CampaignsHandlers from "./campaigns/CampaignsHandlers.ts"
import * as CatalogueHandlers from "./catalogue/CatalogueHandlers.ts"
import * as OptOutsHandlers from "./optouts/OptOutsHandlers.ts"
import * as EventsHandlers from "./eventlog/EventsHandlers.ts"
import * as StreamHandlers from "./eventlog/StreamHandlers.ts"
import * as OrderNoticesHandlers from "./orders/OrderNoticesHandlers.ts"
import * as OrdersHandlers from "./orders/OrdersHandlers.ts"
import * as AnalyticsHandlers from "./analytics/AnalyticsHandlers.ts"
import * as KnowledgeHandlers from "./knowledge/KnowledgeHandlers.ts"
import * as AgentsHandlers from "./agents/AgentsHandlers.ts"
import * as AiHandlers from "./ai/AiHandlers.ts"
import * as ChannelsHandlers from "./channels/ChannelsHandlers.ts"
import * as TemplatesHandlers from "./templates/TemplatesHandlers.ts"
import * as ConversationsHandlers from "./conversations/ConversationsHandlers.ts"
import * as MessagesHandlers from "./messages/MessagesHandlers.ts"
import * as MediaHandlers from "./messages/MediaHandlers.ts"
import * as LeadsHandlers from "./leads/LeadsHandlers.ts"
import * as HttpMetrics from "./observability/HttpMetrics.ts"
import * as MetricsRoute from "./observability/MetricsRoute.ts"
import * as RequestEnvelope from "./RequestEnvelope.ts"
import { UPLOAD_PATH } from "./messages/MediaApi.ts"
import * as RequestErrors from "./RequestErrors.ts"
import * as WebhooksHandlers from "./webhooks/WebhooksHandlers.ts"

export const OPENAPI_PATH = "/api/openapi.json"
export const DOCS_PATH = "/docs"

export interface Options {
  /** Largest accepted request body; 1 MiB unless set. */
  readonly maxBodyBytes?: number | undefined
  /** Largest body of `POST /api/v1/media` (the largest file and its form); 101 MiB unless set. */
  readonly uploadMaxBodyBytes?: number | undefined
  /** How long an API request may take before it is answered 503; 30 s unless set. */
  readonly requestTimeoutSeconds?: number | undefined
  /** Records the HTTP metrics `/metrics` serves; on unless false (`LEADLINE_METRICS=false`, for benchmarks). */
  readonly metrics?: boolean | undefined
  /**
   * Where clients reach the API (`LEADLINE_PUBLIC_URL`), e.g. `https://api.example.com`, or with
   * the path a proxy serves it under: an absolute http(s) URL, without query or fragment (the
   * layer fails to build otherwise). The OpenAPI document's `servers` is then `[{url: publicUrl}]`
   * (trailing slashes dropped) whatever the request. Unset: the origin each request reached, the
   * scheme from `X-Forwarded-Proto` (`http` or `https`) if present, else http, and the `Host`
   * header; `/` without a usable `Host`. The docs page is unaffected (it uses its own origin).
   */
  readonly publicUrl?: string | undefined
  /**
   * The proxies in front of the server (`LEADLINE_TRUSTED_PROXIES`): a request whose peer is one
   * of them has its client address from `X-Forwarded-For`, read from the right past the trusted
   * hops (Effect's `HttpMiddleware.xForwardedHeaders`). None: the socket's peer is the client and
   * forwarded headers name nobody. The WhatsApp webhook's per-source limit counts by it.
   */
  readonly trustedProxies?: ReadonlyArray<IpNetwork.IpNetwork> | undefined
}

/** The client address behind trusted proxies, for every route. */
const forwardedFor = (trustedProxies: ReadonlyArray<IpNetwork.IpNetwork> | undefined) => {
  if (trustedProxies === undefined || trustedProxies.length === 0) return Layer.empty
  const forwarded = HttpMiddleware.xForwardedHeaders({ trustedProxies })
  // Effect's middleware type erases what the handler needs and fails with; it only rewrites the request.
  return HttpRouter.middleware((handler) => forwarded(handler) as typeof handler, { global: true })
}

const apiRoutes = HttpApiBuilder.layer(Api).pipe(
  Layer.provide([
    // One line per group, in Api.ts's order:
    IdentityHandlers.layer,
    KeysHandlers.layer,
    WebhooksHandlers.layer,
    EventsHandlers.layer,
    StreamHandlers.layer,
    AnalyticsHandlers.layer,
    AdminHandlers.layer,
    LeadsHandlers.layer,
    ChannelsHandlers.layer,
    TemplatesHandlers.layer,
    ConversationsHandlers.layer,
    MessagesHandlers.layer,
    MediaHandlers.layer,
    OptOutsHandlers.layer,
    CampaignsHandlers.layer,
    CatalogueHandlers.layer,
    OrdersHandlers.layer,
    OrderNoticesHandlers.layer,
    KnowledgeHandlers.layer,
    AgentsHandlers.layer,
    AiHandlers.layer
  ]),
  Layer.provide([Authentication.layer, AdminAuthentication.layer, Idempotent.layer, RequestErrors.layer])
)

/**
 * The OpenAPI document at `OPENAPI_PATH`, with a `servers` entry (see `Options.publicUrl`), and the
 * docs page at `DOCS_PATH`. Needs nothing but the router.
 */
export const documentRoutes = (options: Pick<Options, "publicUrl"> = {}) =>
  HttpRouter.use((router) =>
    Effect.gen(function* () {
      // Scalar's page carries its 3 MB script inline, which held about 12 MB of every idle server
      // and a module load at start-up: it is built on the first visit instead.
      const scope = yield* Effect.scope
      const docsPage = yield* Effect.cached(
        HttpRouter.toHttpEffect(HttpApiScalar.layer(Api, { path: DOCS_PATH })).pipe(Scope.provide(scope))
      )
      yield* router.add("GET", DOCS_PATH, Effect.flatten(docsPage))
      const { publicUrl } = options
      // A malformed public URL is a configuration mistake: the layer dies with it.
      const configured =
        publicUrl === undefined ? undefined : yield* Effect.sync(() => OpenApiDocument.publicServerUrl(publicUrl))
      const document = OpenApi.fromApi(Api)
      yield* router.add(
        "GET",
        OPENAPI_PATH,
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const url = configured ?? OpenApiDocument.requestOrigin(request.headers)
          return HttpServerResponse.jsonUnsafe(OpenApiDocument.withServer(document, url))
        })
      )
    })
  )

/**
 * Every route of the API, its OpenAPI document and docs page, and the request
 * envelope, and the health checks. Needs the core services, the admin token and
 * a `Readiness` (and, for per-key limits, `RateLimit.Settings` with a
 * `RateLimiter`); serve it with `HttpRouter.serve` on any HTTP server.
 * `beside` are routes of other transports served in the same envelope and metrics
 * (the server mounts WhatsApp's webhook there, from `@leadline/whatsapp-adapter`).
 */
export const routes = <E = never, R = never>(
  options: Options = {},
  beside: Layer.Layer<never, E, R> = Layer.empty as Layer.Layer<never, E, R>
) =>
  Layer.mergeAll(
    apiRoutes.pipe(
      Layer.provide(
        RequestEnvelope.bodyGuard(
          options.maxBodyBytes ?? RequestEnvelope.DEFAULT_MAX_BODY_BYTES,
          options.requestTimeoutSeconds ?? 30,
          {
            path: UPLOAD_PATH,
            maxBodyBytes: options.uploadMaxBodyBytes ?? RequestEnvelope.DEFAULT_UPLOAD_MAX_BODY_BYTES,
            // A 100 MiB file on a slow link: ten minutes, or the API's own timeout when longer.
            timeoutSeconds: Math.max(options.requestTimeoutSeconds ?? 30, 600)
          },
          RequestEnvelope.staticMethods(Api)
        )
      )
    ),
    documentRoutes(options),
    Health.routes,
    MetricsRoute.routes,
    beside
  ).pipe(
    // Every route names its pattern for the HTTP metrics; the envelope around them records them.
    Layer.provide(HttpMetrics.label),
    Layer.merge(RequestEnvelope.envelope({ metrics: options.metrics ?? true })),
    Layer.merge(forwardedFor(options.trustedProxies))
  )

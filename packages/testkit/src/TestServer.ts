import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Clock, Context, Effect, Exit, Layer, Metric, Redacted, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import * as IpNetwork from "effect/net/IpNetwork"
import { StreamSettings } from "@leadline/core/eventlog/EventStream"
import type { MessageTransport } from "@leadline/core/messages/MessageTransport"
import type { TemplateGraph } from "@leadline/core/templates/TemplateGraph"
import type * as MessageSender from "@leadline/core/messages/Sender"
import type { MediaDownloader } from "@leadline/core/whatsapp/MediaDownloader"
import type * as MediaFetcher from "@leadline/core/whatsapp/MediaFetcher"
import type * as Services from "@leadline/core/Services"
import { MetaApp } from "@leadline/whatsapp-adapter/webhook/MetaApp"
import type { WebhookReceiver } from "@leadline/whatsapp-adapter/webhook/WebhookReceiver"
import { AdminToken } from "@leadline/http-adapter/admin/AdminAuthentication"
import { Readiness } from "@leadline/http-adapter/Health"
import { createServer } from "@leadline/http-adapter/NodeServer"
import { MetricsSettings } from "@leadline/http-adapter/observability/MetricsRoute"
import * as RateLimit from "@leadline/http-adapter/RateLimit"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"
import * as Composition from "@leadline/server/Composition"
import type * as GuardedLookup from "@leadline/webhook-worker/GuardedLookup"
import type * as Worker from "@leadline/webhook-worker/Worker"
import * as SimulatorMedia from "@leadline/whatsapp-adapter/simulator/SimulatorMedia"
import * as SimulatorTemplates from "@leadline/whatsapp-adapter/simulator/SimulatorTemplates"
import * as SimulatorTransport from "@leadline/whatsapp-adapter/simulator/SimulatorTransport"
import * as AdjustableClock from "./AdjustableClock.ts"

export interface Target {
  /** Where the API listens, without a trailing slash. */
  readonly baseUrl: string
  readonly adminToken: string
  /** The Meta app secret the server verifies WhatsApp webhooks with, when the tests may sign them. */
  readonly whatsappAppSecret?: string | undefined
  /** The verify token of the WhatsApp webhook handshake, when the tests may try it. */
  readonly whatsappVerifyToken?: string | undefined
}

export interface Running extends Target {
  /** The Meta app secret the server verifies WhatsApp webhooks with: sign test payloads with it. */
  readonly whatsappAppSecret: string
  readonly whatsappVerifyToken: string
  readonly clock: AdjustableClock.AdjustableClock
  readonly close: () => Promise<void>
}

export interface StartOptions {
  /** The domain wiring to serve; the in-memory one unless given. */
  readonly app?: Layer.Layer<Composition.Stores, unknown> | undefined
  readonly maxBodyBytes?: number | undefined
  /** How long an API request may take before it is answered 503; 30 s unless set. */
  readonly requestTimeoutSeconds?: number | undefined
  readonly readiness?: Layer.Layer<Readiness> | undefined
  /** Per-key limits (in memory); off unless given. */
  readonly rateLimit?: RateLimit.RateLimitSettings | undefined
  /** The AI simulation's own per-key limit; 30 a minute unless given. */
  readonly simulationRateLimit?: RateLimit.RateLimitSettings | undefined
  /** The WhatsApp webhook's refused requests per source (`WHATSAPP_WEBHOOK_RATE_LIMIT`); off unless given. */
  readonly webhookRateLimit?: RateLimit.RateLimitSettings | undefined
  /** Proxies whose `X-Forwarded-For` names the client (`LEADLINE_TRUSTED_PROXIES`), e.g. `["127.0.0.1/32"]`; none unless given. */
  readonly trustedProxies?: ReadonlyArray<string> | undefined
  /**
   * Fetch `url` knowledge sources in the background (the default), or not: a fuzzer that counts the
   * events its answers announce leaves them `processing`, since a fetch's event comes later.
   */
  readonly knowledgeFetcher?: boolean | undefined
  /**
   * Run lead jobs (imports, bulk changes) in the background (the default), or not: a fuzzer that
   * counts the leads its answers made leaves them `queued`, since a job's leads come later.
   */
  readonly leadJobs?: boolean | undefined
  /** How often events past their 30 days are deleted (hourly, as in the server, unless set). */
  readonly eventPurgeMillis?: number | undefined
  /** Serves `/metrics` behind this bearer token (`LEADLINE_METRICS_TOKEN`); no `/metrics` without one. */
  readonly metricsToken?: string | undefined
  /** `GET /api/v1/stream`'s heartbeat and per-connection buffer; 15 s and 1,000 events unless given. */
  readonly stream?: { readonly heartbeatMillis?: number; readonly buffer?: number } | undefined
  readonly messaging?:
    | {
        /** Run the message sender in the server (the default), or not. */
        readonly sender?: boolean | undefined
        /** What the sender sends through: the simulator (statuses at once) unless given. */
        readonly transport?: Layer.Layer<MessageTransport, unknown, Services.Services | WebhookReceiver> | undefined
        /** Meta's template endpoints: the simulator's (reviews at once) unless given. */
        readonly templates?: Layer.Layer<TemplateGraph, unknown, Services.Services | WebhookReceiver> | undefined
        /** The scheduled template sync; off unless given. */
        readonly templateSync?: { readonly intervalMillis: number } | undefined
        readonly senderOptions?: MessageSender.Options | undefined
        /** Where inbound files are fetched from: the simulator's own unless given. */
        readonly mediaDownloader?: Layer.Layer<MediaDownloader> | undefined
        /** The inbound files' fetcher's settings (retries after 20 ms unless given), or `false`. */
        readonly mediaFetcher?: false | MediaFetcher.Options | undefined
        /** How often snoozed conversations are reopened when due (30 s). */
        readonly snoozeCheckMillis?: number | undefined
      }
    | undefined
  readonly webhooks?:
    | {
        /** http and loopback receivers (the mock receiver), as `WEBHOOK_ALLOW_PRIVATE_URLS=true` allows. */
        readonly allowPrivateUrls?: boolean | undefined
        /** Run the delivery worker in the server (the default), or not. */
        readonly worker?: boolean | undefined
        readonly workerOptions?: Worker.Options | undefined
        /** Host names the worker resolves, instead of DNS. */
        readonly resolver?: GuardedLookup.ResolverShape | undefined
      }
    | undefined
}

/**
 * Serves the whole API on an ephemeral loopback port: a real HTTP server for
 * tests to call with real clients, with the webhook worker running inside it
 * as in the server (the same wiring: `@leadline/server`'s Composition). The server runs on an adjustable clock.
 */
export const start = async (options: StartOptions = {}): Promise<Running> => {
  const adminToken = `lla_test_${crypto.randomUUID()}`
  const clock = AdjustableClock.make()
  const allowPrivate = options.webhooks?.allowPrivateUrls ?? false
  // The process's own Meta app (whatsapp-adapter's default), which every wiring built here uses, prebuilt ones too.
  const metaApp = Effect.runSync(Effect.service(MetaApp))
  const whatsappAppSecret = Redacted.value(metaApp.appSecret)
  const whatsappVerifyToken = Redacted.value(metaApp.verifyToken)
  const network = { allowPrivate, resolver: options.webhooks?.resolver }
  // The server's own wiring (`@leadline/server`'s Composition), with the test's options.
  const api = Composition.api({
    routes: {
      maxBodyBytes: options.maxBodyBytes,
      requestTimeoutSeconds: options.requestTimeoutSeconds,
      trustedProxies: options.trustedProxies?.map(IpNetwork.fromStringUnsafe)
    },
    network,
    webhooks: options.webhooks?.worker === false ? false : (options.webhooks?.workerOptions ?? {}),
    sender: options.messaging?.sender === false ? false : { ratePerChannel: 0, ...options.messaging?.senderOptions },
    snoozeCheckMillis: options.messaging?.snoozeCheckMillis,
    agentPollMillis: 100,
    knowledgeFetcher: options.knowledgeFetcher === false ? false : { intervalMillis: 100 },
    leadJobs: options.leadJobs === false ? false : { intervalMillis: 100 },
    mediaFetcher:
      options.messaging?.mediaFetcher === false
        ? false
        : { pollMillis: 200, retryBaseMillis: 20, ...options.messaging?.mediaFetcher },
    templateSync: options.messaging?.templateSync,
    eventPurgeMillis: options.eventPurgeMillis
  })
  // The transport serves the sender and, for the simulator, the operator's customer route.
  const transport = Layer.merge(
    options.messaging?.transport ?? SimulatorTransport.layer({ delaysMs: [0, 0, 0] }),
    options.messaging?.templates ?? SimulatorTemplates.layer({ reviewMs: 0 })
  )
  const layer = HttpRouter.serve(
    api.pipe(
      Layer.provide(transport),
      Layer.provide(options.messaging?.mediaDownloader ?? SimulatorMedia.layer),
      Layer.provide(
        Composition.app(options.app ?? MemoryApp.layer, { network }).pipe(
          Layer.provide(
            options.stream === undefined
              ? Layer.empty
              : Layer.succeed(StreamSettings, { heartbeatMillis: 15_000, buffer: 1_000, ...options.stream })
          )
        )
      ),
      Layer.provide(Layer.succeed(AdminToken, Redacted.make(adminToken))),
      Layer.provide(options.readiness ?? Readiness.always),
      Layer.provide(
        Layer.succeed(MetricsSettings, {
          token: options.metricsToken === undefined ? undefined : Redacted.make(options.metricsToken),
          version: "test"
        })
      ),
      Layer.provide(options.rateLimit === undefined ? Layer.empty : RateLimit.layerMemory(options.rateLimit)),
      Layer.provide(
        options.simulationRateLimit === undefined
          ? Layer.empty
          : Layer.succeed(RateLimit.SimulationSettings, options.simulationRateLimit)
      ),
      Layer.provide(
        options.webhookRateLimit === undefined
          ? Layer.empty
          : Layer.succeed(RateLimit.SourceSettings, options.webhookRateLimit)
      )
    ),
    { disableLogger: true, disableListenLog: true }
  ).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))

  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(layer, scope).pipe(
      Effect.provideService(Clock.Clock, clock.clock),
      // Each server counts for itself, as a process of its own would.
      Effect.provideService(Metric.MetricRegistry, new Map())
    )
  )
  const baseUrl = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
  return {
    baseUrl,
    adminToken,
    whatsappAppSecret,
    whatsappVerifyToken,
    clock,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

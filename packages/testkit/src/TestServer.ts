import { createServer } from "@leadline/http-adapter/NodeServer"
import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Context, Effect, Exit, Layer, Metric, Redacted, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import type * as Services from "@leadline/core/Services"
import type { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import { WebhookSettings } from "@leadline/core/webhooks/WebhookSettings"
import { MetaApp } from "@leadline/core/whatsapp/Inbound"
import { AdminToken } from "@leadline/http-adapter/admin/AdminAuthentication"
import { Readiness } from "@leadline/http-adapter/Health"
import { MetricsSettings } from "@leadline/http-adapter/observability/MetricsRoute"
import * as RateLimit from "@leadline/http-adapter/RateLimit"
import * as Server from "@leadline/http-adapter/Server"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"
import * as GuardedLookup from "@leadline/webhook-worker/GuardedLookup"
import { Sender } from "@leadline/webhook-worker/Sender"
import * as Worker from "@leadline/webhook-worker/Worker"
import type { MessageTransport } from "@leadline/core/messages/MessageTransport"
import * as MessageSender from "@leadline/core/messages/Sender"
import * as Snoozer from "@leadline/core/conversations/Snoozer"
import * as AgentResponder from "@leadline/core/agents/AgentResponder"
import * as SourceFetcher from "@leadline/core/knowledge/SourceFetcher"
import * as PageFetcher from "@leadline/webhook-worker/PageFetcher"
import type { OutboundQueue } from "@leadline/core/messages/OutboundQueue"
import * as SimulatorTransport from "@leadline/whatsapp-adapter/simulator/SimulatorTransport"
import * as AdjustableClock from "./AdjustableClock.ts"

export interface Target {
  /** Where the API listens, without a trailing slash. */
  readonly baseUrl: string
  readonly adminToken: string
  /** The Meta app secret the server verifies WhatsApp webhooks with, when the tests may sign them. */
  readonly whatsappAppSecret?: string | undefined
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
  readonly app?: Layer.Layer<Services.Services | DeliveryQueue | OutboundQueue, unknown> | undefined
  readonly maxBodyBytes?: number | undefined
  /** How long an API request may take before it is answered 503; 30 s unless set. */
  readonly requestTimeoutSeconds?: number | undefined
  readonly readiness?: Layer.Layer<Readiness> | undefined
  /** Per-key limits (in memory); off unless given. */
  readonly rateLimit?: RateLimit.RateLimitSettings | undefined
  /** The AI simulation's own per-key limit; 30 a minute unless given. */
  readonly simulationRateLimit?: RateLimit.RateLimitSettings | undefined
  /**
   * Fetch `url` knowledge sources in the background (the default), or not: a fuzzer that counts the
   * events its answers announce leaves them `processing`, since a fetch's event comes later.
   */
  readonly knowledgeFetcher?: boolean | undefined
  /** Serves `/metrics` behind this bearer token (`LEADLINE_METRICS_TOKEN`); no `/metrics` without one. */
  readonly metricsToken?: string | undefined
  readonly messaging?:
    | {
        /** Run the message sender in the server (the default), or not. */
        readonly sender?: boolean | undefined
        /** What the sender sends through: the simulator (statuses at once) unless given. */
        readonly transport?: Layer.Layer<MessageTransport, unknown, Services.Services> | undefined
        readonly senderOptions?: MessageSender.Options | undefined
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
 * as in the reference server. The server runs on an adjustable clock.
 */
export const start = async (options: StartOptions = {}): Promise<Running> => {
  const adminToken = `lla_test_${crypto.randomUUID()}`
  const clock = AdjustableClock.make()
  const allowPrivate = options.webhooks?.allowPrivateUrls ?? false
  // The process's own Meta app (core's default), which every wiring built here uses, prebuilt ones too.
  const metaApp = Effect.runSync(Effect.service(MetaApp))
  const whatsappAppSecret = Redacted.value(metaApp.appSecret)
  const whatsappVerifyToken = Redacted.value(metaApp.verifyToken)
  const resolver =
    options.webhooks?.resolver === undefined
      ? Layer.empty
      : Layer.succeed(GuardedLookup.Resolver, options.webhooks.resolver)
  const app = (options.app ?? MemoryApp.layer).pipe(
    // Knowledge pages are fetched with the webhook sender's guard and its private-URL setting.
    Layer.provide(PageFetcher.layer({ allowPrivate }).pipe(Layer.provide(resolver))),
    Layer.provide(Layer.succeed(WebhookSettings, { allowPrivateUrls: allowPrivate }))
  )
  const worker =
    options.webhooks?.worker === false
      ? Layer.empty
      : Worker.layer(options.webhooks?.workerOptions).pipe(
          Layer.provide(Sender.layer({ allowPrivate })),
          Layer.provide(resolver)
        )
  // The transport serves the sender and, for the simulator, the operator's customer route.
  const transport = options.messaging?.transport ?? SimulatorTransport.layer({ delaysMs: [0, 0, 0] })
  const messageSender =
    options.messaging?.sender === false
      ? Layer.empty
      : MessageSender.layer({ ratePerChannel: 0, ...options.messaging?.senderOptions })
  const layer = HttpRouter.serve(
    Layer.mergeAll(
      Server.routes({ maxBodyBytes: options.maxBodyBytes, requestTimeoutSeconds: options.requestTimeoutSeconds }),
      worker,
      messageSender,
      Snoozer.layer({ intervalMillis: options.messaging?.snoozeCheckMillis }),
      AgentResponder.loop({ intervalMillis: 100 }),
      options.knowledgeFetcher === false ? Layer.empty : SourceFetcher.loop({ intervalMillis: 100 })
    ).pipe(
      Layer.provide(transport),
      Layer.provide(app),
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

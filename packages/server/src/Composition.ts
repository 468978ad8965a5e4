import { Layer } from "effect"
import type { AgentJobsRepo } from "@leadline/core/agents/AgentJobsRepo"
import * as AgentResponder from "@leadline/core/agents/AgentResponder"
import * as Snoozer from "@leadline/core/conversations/Snoozer"
import type { LeadJobsRepo } from "@leadline/core/leads/LeadJobsRepo"
import * as LeadJobRunner from "@leadline/core/leads/LeadJobRunner"
import * as IdempotencyPurge from "@leadline/core/idempotency/IdempotencyPurge"
import * as EventRetention from "@leadline/core/webhooks/EventRetention"
import type { IdempotencyStore } from "@leadline/core/idempotency/IdempotencyStore"
import * as SourceFetcher from "@leadline/core/knowledge/SourceFetcher"
import * as MediaLimits from "@leadline/core/messages/MediaLimits"
import type { MediaStore } from "@leadline/core/messages/MediaStore"
import * as TemplateSync from "@leadline/core/templates/TemplateSync"
import type { MessageTransport } from "@leadline/core/messages/MessageTransport"
import type { OutboundQueue } from "@leadline/core/messages/OutboundQueue"
import * as MessageSender from "@leadline/core/messages/Sender"
import type { MediaDownloader } from "@leadline/core/whatsapp/MediaDownloader"
import * as MediaFetcher from "@leadline/core/whatsapp/MediaFetcher"
import type { MediaQueue } from "@leadline/core/whatsapp/MediaQueue"
import type * as Services from "@leadline/core/Services"
import type { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import type { WebhooksRepo } from "@leadline/core/webhooks/WebhooksRepo"
import { OutboundSettings } from "@leadline/core/outbound/OutboundSettings"
import type { AdminToken } from "@leadline/http-adapter/admin/AdminAuthentication"
import { rejection } from "@leadline/http-adapter/ErrorMapping"
import type { Readiness } from "@leadline/http-adapter/Health"
import * as Server from "@leadline/http-adapter/Server"
import * as RateLimit from "@leadline/http-adapter/RateLimit"
import * as GuardedLookup from "@leadline/webhook-worker/GuardedLookup"
import * as PageFetcher from "@leadline/webhook-worker/PageFetcher"
import { Sender } from "@leadline/webhook-worker/Sender"
import * as WebhookWorker from "@leadline/webhook-worker/Worker"
import { MetaApp } from "@leadline/whatsapp-adapter/webhook/MetaApp"
import { WebhookReceiver } from "@leadline/whatsapp-adapter/webhook/WebhookReceiver"
import * as WebhookRoute from "@leadline/whatsapp-adapter/webhook/WebhookRoute"
import * as Dashboard from "./Dashboard.ts"

/**
 * The one wiring of a Leadline process: which routes it serves and which background loops run
 * beside them. `leadline serve`, `leadline worker` and the testkit's test server all compose
 * from here, each with its own options, so a loop added here runs in all three.
 */

/** The webhook guard's settings: may receivers be private (http, loopback), and how names resolve. */
export interface Network {
  /** http and loopback receivers and knowledge pages, as `WEBHOOK_ALLOW_PRIVATE_URLS=true` allows. */
  readonly allowPrivate: boolean
  /** Host names the guard resolves, instead of DNS (tests). */
  readonly resolver?: GuardedLookup.ResolverShape | undefined
}

export interface LoopOptions {
  readonly network: Network
  /** The webhook delivery worker, or `false` to leave deliveries to `leadline worker` processes. */
  readonly webhooks: false | WebhookWorker.Options
  /** The WhatsApp message sender, or `false` (`WHATSAPP_SENDER_ENABLED=false`). */
  readonly sender: false | MessageSender.Options
  /** How often snoozed conversations are checked (30 s unless set). */
  readonly snoozeCheckMillis?: number | undefined
  /** How often the agents' responder looks for inbound messages to answer (1 s unless set). */
  readonly agentPollMillis?: number | undefined
  /** How often `url` knowledge sources are looked for, or `false` not to fetch them (1 s unless set). */
  readonly knowledgeFetcher?: false | { readonly intervalMillis?: number | undefined } | undefined
  /** How often lead jobs (imports, bulk changes) are looked for besides their wake-ups (1 s), or `false` not to run them. */
  readonly leadJobs?: false | { readonly intervalMillis?: number | undefined } | undefined
  /** The inbound files' fetcher (Meta's limits unless set), or `false` not to fetch them. */
  readonly mediaFetcher?: false | MediaFetcher.Options | undefined
  /** The scheduled sync of WhatsApp templates from Meta; off unless given (`WHATSAPP_TEMPLATES_SYNC_SECONDS`). */
  readonly templateSync?: false | { readonly intervalMillis: number } | undefined
}

const resolverLayer = (network: Network) =>
  network.resolver === undefined ? Layer.empty : Layer.succeed(GuardedLookup.Resolver, network.resolver)

/**
 * What runs beside the API (and alone in `leadline worker`): webhook deliveries, the message
 * sender, the snooze loop, the agents' responder, the lead jobs' runner, the knowledge page fetcher, the inbound files'
 * fetcher and the template sync. The caller provides the message transport and the templates'
 * Graph beside it (a server shares them with the simulator's route and the template routes), and
 * the media downloader.
 */
export const loops = (options: LoopOptions) =>
  Layer.mergeAll(
    options.webhooks === false
      ? Layer.empty
      : WebhookWorker.layer(options.webhooks).pipe(
          Layer.provide(Sender.layer({ allowPrivate: options.network.allowPrivate })),
          Layer.provide(resolverLayer(options.network))
        ),
    options.sender === false ? Layer.empty : MessageSender.layer(options.sender),
    Snoozer.layer({ intervalMillis: options.snoozeCheckMillis }),
    AgentResponder.loop({ intervalMillis: options.agentPollMillis }),
    options.leadJobs === false ? Layer.empty : LeadJobRunner.loop(options.leadJobs),
    options.knowledgeFetcher === false ? Layer.empty : SourceFetcher.loop(options.knowledgeFetcher),
    options.mediaFetcher === false ? Layer.empty : MediaFetcher.layer(options.mediaFetcher),
    options.templateSync === undefined || options.templateSync === false
      ? Layer.empty
      : TemplateSync.loop(options.templateSync)
  )

export interface ApiOptions extends LoopOptions {
  readonly routes: Server.Options
  /** How often events past the log's 30 days are deleted (hourly unless set). */
  readonly eventPurgeMillis?: number | undefined
  /** The built dashboard to serve at /dashboard, or none. */
  readonly dashboardDir?: string | undefined
}

/**
 * The HTTP app of a server: the API, the dashboard, the purges of expired idempotency keys and of
 * events past their 30 days, and the background loops. Needs the store wiring (see `app`), the message transport, the admin
 * token, readiness and the HTTP settings (`MetricsSettings`, rate limits).
 */
export const api = (options: ApiOptions) =>
  Layer.mergeAll(
    Server.routes(
      options.routes,
      // Meta's webhook, beside the API: its signature, JSON and raw body are whatsapp-adapter's;
      // its body limit is Meta's (WebhookRoute.MAX_BODY_BYTES), not the API's setting.
      WebhookRoute.routes({ reject: rejection, budget: RateLimit.refusalBudget })
    ),
    options.dashboardDir === undefined ? Layer.empty : Dashboard.routes(options.dashboardDir),
    IdempotencyPurge.layer(),
    EventRetention.layer(options.eventPurgeMillis ?? "1 hour"),
    loops(options)
  )

/**
 * A store wiring (in memory, or `SqlApp` on a database) with what its services need from the
 * process: knowledge pages fetched with the webhook sender's guard and its private-URL setting,
 * and WhatsApp's webhook receiver with the Meta app it verifies signatures with.
 */
export const app = <A, E, R>(
  stores: Layer.Layer<A, E, R>,
  options: {
    readonly network: Network
    readonly metaApp?: (typeof MetaApp)["Service"] | undefined
    /** The most bytes kept per file type (Meta's unless set): uploads to send are checked against them. */
    readonly mediaLimits?: MediaLimits.Limits | undefined
  }
) =>
  stores.pipe(
    Layer.provide(PageFetcher.layer({ allowPrivate: options.network.allowPrivate })),
    Layer.provide(resolverLayer(options.network)),
    Layer.provideMerge(Layer.succeed(OutboundSettings, { allowPrivateUrls: options.network.allowPrivate })),
    Layer.provideMerge(Layer.succeed(MediaLimits.Setting, options.mediaLimits ?? MediaLimits.defaults)),
    options.metaApp === undefined ? (layer) => layer : Layer.provideMerge(Layer.succeed(MetaApp, options.metaApp)),
    (layer) => Layer.provideMerge(WebhookReceiver.layer, layer)
  )

/**
 * What a store wiring gives a server: the services, the webhook and outbound queues, the
 * idempotency store and the webhooks' tables (their purges) and the agents' jobs (the responder's wake-ups); `app` adds
 * WhatsApp's webhook receiver over them.
 */
export type Stores =
  | Services.Services
  | DeliveryQueue
  | OutboundQueue
  | IdempotencyStore
  | WebhooksRepo
  | AgentJobsRepo
  | LeadJobsRepo
  | MediaQueue
  | MediaStore

/** What `api` leaves for the caller to provide besides the stores. */
export type Provided = MessageTransport | MediaDownloader | AdminToken | Readiness

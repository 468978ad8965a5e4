import { type Effect, Layer } from "effect"
import * as AgentResponder from "@leadline/core/agents/AgentResponder"
import * as Snoozer from "@leadline/core/conversations/Snoozer"
import * as SourceFetcher from "@leadline/core/knowledge/SourceFetcher"
import { WebhookSettings } from "@leadline/core/webhooks/WebhookSettings"
import { MetaApp } from "@leadline/core/whatsapp/Inbound"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as PageFetcher from "@leadline/webhook-worker/PageFetcher"
import * as Ai from "./Ai.ts"
import { databaseConfig, type ServerConfig, webhookSettings } from "./Config.ts"
import * as WhatsApp from "./WhatsApp.ts"
import * as Worker from "./Worker.ts"

/**
 * What runs beside the API in `npm start` and alone in `leadline worker`: webhook deliveries
 * (unless the server is told to leave them to workers), the message sender, the snooze loop,
 * the agents' responder and the knowledge page fetcher. The caller provides the message transport
 * (the server shares its one with the simulator's route).
 */
export const loops = (config: ServerConfig, options: { readonly webhooks: boolean }) =>
  Layer.mergeAll(
    options.webhooks ? Worker.layer(config) : Layer.empty,
    WhatsApp.sender(config),
    Snoozer.layer(),
    AgentResponder.loop(),
    SourceFetcher.loop()
  )

/**
 * The core on SQL with the settings both processes give it: the AI model (the simulator reads it
 * too), knowledge pages fetched with the webhook sender's guard and its private-URL setting, the
 * webhook settings and the Meta app.
 */
export const core = (config: ServerConfig, metaApp: Effect.Success<ReturnType<typeof WhatsApp.metaApp>>) =>
  SqlApp.layer(databaseConfig(config)).pipe(
    Layer.provideMerge(Ai.layer),
    Layer.provide(PageFetcher.layer({ allowPrivate: config.allowPrivateWebhookUrls })),
    Layer.provideMerge(Layer.succeed(WebhookSettings, webhookSettings(config))),
    Layer.provideMerge(Layer.succeed(MetaApp, metaApp))
  )

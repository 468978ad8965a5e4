import { Effect, Layer } from "effect"
import { WebhookSettings } from "@leadline/core/webhooks/WebhookSettings"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as Snoozer from "@leadline/core/conversations/Snoozer"
import * as AgentResponder from "@leadline/core/agents/AgentResponder"
import * as SourceFetcher from "@leadline/core/knowledge/SourceFetcher"
import * as PageFetcher from "@leadline/webhook-worker/PageFetcher"
import * as Ai from "./Ai.ts"
import { databaseConfig, ServerConfig, webhookSettings, withSettings } from "./Config.ts"
import * as WhatsApp from "./WhatsApp.ts"
import * as Worker from "./Worker.ts"
import { MetaApp } from "@leadline/core/whatsapp/Inbound"

/**
 * Runs the webhook delivery worker, the message sender, the snooze loop, the agents' responder and the
 * knowledge page fetcher alone, until interrupted. Several workers
 * (and servers) can share a PostgreSQL database; the embedded database belongs
 * to the server process, whose own worker then does the work.
 */
export const work = Effect.flatMap(ServerConfig, (config) => workWith(config).pipe(withSettings(config)))

const workWith = (config: ServerConfig) =>
  Effect.gen(function* () {
    yield* Effect.logInfo(
      config.databaseUrl._tag === "None"
        ? `Webhook worker on the embedded database in ${config.dataDir} (stop the server first, or set DATABASE_URL)`
        : "Webhook worker on PostgreSQL from DATABASE_URL"
    )
    const metaApp = yield* WhatsApp.metaApp(config)
    return yield* Layer.launch(
      Layer.mergeAll(
        Worker.layer(config),
        WhatsApp.sender(config),
        Snoozer.layer(),
        AgentResponder.loop(),
        SourceFetcher.loop()
      ).pipe(
        Layer.provide(WhatsApp.transport(config)),
        Layer.provide(
          SqlApp.layer(databaseConfig(config)).pipe(
            Layer.provideMerge(Ai.layer),
            Layer.provide(PageFetcher.layer({ allowPrivate: config.allowPrivateWebhookUrls }))
          )
        ),
        Layer.provide(Layer.succeed(WebhookSettings, webhookSettings(config))),
        Layer.provide(Layer.succeed(MetaApp, metaApp))
      )
    )
  })

import { Layer } from "effect"
import type { MetaApp } from "@leadline/whatsapp-adapter/webhook/MetaApp"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as Ai from "./Ai.ts"
import * as Composition from "./Composition.ts"
import { databaseConfig, type ServerConfig, workerOptions } from "./Config.ts"
import * as WhatsApp from "./WhatsApp.ts"

/** The configured deployment's loops: what `leadline serve` runs beside the API and `leadline worker` alone. */
export const loopOptions = (
  config: ServerConfig,
  options: { readonly webhooks: boolean }
): Composition.LoopOptions => ({
  network: { allowPrivate: config.allowPrivateWebhookUrls },
  webhooks: options.webhooks ? workerOptions(config) : false,
  sender: WhatsApp.senderOptions(config),
  templateSync: WhatsApp.templateSyncOptions(config)
})

/**
 * The core on SQL (`DATABASE_URL`, else the embedded database in the data directory) with the
 * settings both processes give it: the AI model (the simulator reads it too), the webhook guard's
 * settings and the Meta app.
 */
export const stores = (config: ServerConfig, metaApp: (typeof MetaApp)["Service"]) =>
  Composition.app(SqlApp.layer(databaseConfig(config)).pipe(Layer.provideMerge(Ai.layer)), {
    network: { allowPrivate: config.allowPrivateWebhookUrls },
    metaApp
  })

import { Layer } from "effect"
import { StreamSettings } from "@leadline/core/eventlog/EventStream"
import type { MetaApp } from "@leadline/whatsapp-adapter/webhook/MetaApp"
import type * as Keyring from "@leadline/sql-adapter/sealing/Keyring"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as Ai from "./Ai.ts"
import * as Composition from "./Composition.ts"
import * as FileMediaStore from "./FileMediaStore.ts"
import * as MediaConfig from "./MediaConfig.ts"
import { databaseConfig, type ServerConfig, workerOptions } from "./Config.ts"
import * as WhatsApp from "./WhatsApp.ts"

/** The configured deployment's loops: what `leadline serve` runs beside the API and `leadline worker` alone. */
export const loopOptions = (
  config: ServerConfig,
  options: { readonly webhooks: boolean; readonly media: boolean }
): Composition.LoopOptions => ({
  network: { allowPrivate: config.allowPrivateWebhookUrls },
  webhooks: options.webhooks ? workerOptions(config) : false,
  sender: WhatsApp.senderOptions(config),
  mediaFetcher: options.media ? MediaConfig.fetcherOptions(config.media) : false,
  templateSync: WhatsApp.templateSyncOptions(config)
})

/**
 * The core on SQL (`DATABASE_URL`, else the embedded database in the data directory) with the
 * settings both processes give it: the AI model (the simulator reads it too), the event streams'
 * settings, the webhook guard's settings, the Meta app, and the keyring that seals provider secrets (`Secrets.ts`).
 */
export const stores = (
  config: ServerConfig,
  metaApp: (typeof MetaApp)["Service"],
  keyring: Keyring.Keyring | undefined
) =>
  Composition.app(
    SqlApp.layer(
      { ...databaseConfig(config), keyring },
      // Inbound files in a directory unless LEADLINE_MEDIA_STORE=postgres keeps them in the database.
      config.media.store === "fs"
        ? FileMediaStore.layer(MediaConfig.directoryOf(config.media, config.dataDir))
        : undefined
    ).pipe(
      Layer.provideMerge(Ai.layer),
      Layer.provide(
        Layer.succeed(StreamSettings, {
          heartbeatMillis: config.streamHeartbeatSeconds * 1000,
          buffer: config.streamBuffer
        })
      )
    ),
    {
      network: { allowPrivate: config.allowPrivateWebhookUrls },
      metaApp,
      mediaLimits: config.media.limits
    }
  )

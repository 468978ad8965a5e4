import { Layer } from "effect"
import { Sender } from "@leadline/webhook-worker/Sender"
import * as WebhookWorker from "@leadline/webhook-worker/Worker"
import { type ServerConfig, workerOptions } from "./Config.ts"

/** The delivery worker as configured: it needs the delivery queue of a store wiring. */
export const layer = (config: ServerConfig) =>
  WebhookWorker.layer(workerOptions(config)).pipe(
    Layer.provide(Sender.layer({ allowPrivate: config.allowPrivateWebhookUrls }))
  )

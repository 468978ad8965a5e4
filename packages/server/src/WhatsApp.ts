import { Effect, Layer, Option } from "effect"
import type * as MessageSender from "@leadline/core/messages/Sender"
import * as CloudMedia from "@leadline/whatsapp-adapter/cloud/CloudMedia"
import * as CloudTemplates from "@leadline/whatsapp-adapter/cloud/CloudTemplates"
import * as CloudTransport from "@leadline/whatsapp-adapter/cloud/CloudTransport"
import * as SimulatorMedia from "@leadline/whatsapp-adapter/simulator/SimulatorMedia"
import * as SimulatorTemplates from "@leadline/whatsapp-adapter/simulator/SimulatorTemplates"
import * as SimulatorTransport from "@leadline/whatsapp-adapter/simulator/SimulatorTransport"
import type { ServerConfig } from "./Config.ts"
import { resolveSecret } from "./SecretFile.ts"

/**
 * The Meta app's secret and verify token (docs/contract-messaging.md §0a.3): from the environment
 * when set, in every transport mode; otherwise made once and kept in the data directory.
 * The Cloud API mode refuses to start without both: Meta signs with the app's real secret.
 */
export const metaApp = (config: ServerConfig) =>
  Effect.gen(function* () {
    if (
      config.whatsappTransport === "cloud" &&
      (Option.isNone(config.whatsappAppSecret) || Option.isNone(config.whatsappVerifyToken))
    ) {
      return yield* Effect.fail(
        new Error("WHATSAPP_TRANSPORT=cloud needs WHATSAPP_APP_SECRET and WHATSAPP_VERIFY_TOKEN (your Meta app's)")
      )
    }
    const appSecret = yield* resolveSecret({
      dataDir: config.dataDir,
      name: "whatsapp-app-secret",
      envName: "WHATSAPP_APP_SECRET",
      fromEnv: Option.getOrUndefined(config.whatsappAppSecret)
    })
    const verifyToken = yield* resolveSecret({
      dataDir: config.dataDir,
      name: "whatsapp-verify-token",
      envName: "WHATSAPP_VERIFY_TOKEN",
      fromEnv: Option.getOrUndefined(config.whatsappVerifyToken)
    })
    return { appSecret, verifyToken }
  })

/**
 * The transport the sender uses and the templates' Graph beside it: the simulator's (offline, the
 * default) or Meta's Cloud API.
 */
export const transport = (config: ServerConfig) =>
  config.whatsappTransport === "cloud"
    ? Layer.merge(CloudTransport.layerConfig, CloudTemplates.layerConfig)
    : Layer.merge(SimulatorTransport.layerConfig, SimulatorTemplates.layerConfig)

/** The scheduled template sync, or `false` when `WHATSAPP_TEMPLATES_SYNC_SECONDS=0`. */
export const templateSyncOptions = (config: ServerConfig): false | { readonly intervalMillis: number } =>
  config.templatesSyncSeconds > 0 ? { intervalMillis: config.templatesSyncSeconds * 1000 } : false

/** Where inbound files come from: the simulator's own (offline), or Graph with the transport's settings. */
export const mediaDownloader = (config: ServerConfig) =>
  config.whatsappTransport === "cloud"
    ? Layer.unwrap(Effect.map(CloudTransport.config, (options) => CloudMedia.layer(options)))
    : SimulatorMedia.layer

/** The message sender's settings, or `false` when `WHATSAPP_SENDER_ENABLED=false`. */
export const senderOptions = (config: ServerConfig): false | MessageSender.Options =>
  config.senderEnabled
    ? { ratePerChannel: config.whatsappSendRate, leaseMillis: config.senderLeaseSeconds * 1000 }
    : false

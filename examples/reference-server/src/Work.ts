import { Effect, Layer } from "effect"
import * as Background from "./Background.ts"
import { ServerConfig, withSettings } from "./Config.ts"
import * as WhatsApp from "./WhatsApp.ts"

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
      Background.loops(config, { webhooks: true }).pipe(
        Layer.provide(WhatsApp.transport(config)),
        Layer.provide(Background.core(config, metaApp))
      )
    )
  })

import { readdirSync } from "node:fs"
import { setPriority } from "node:os"
import { Effect, Layer } from "effect"
import * as Composition from "./Composition.ts"
import { ServerConfig, withSettings } from "./Config.ts"
import * as Deployment from "./Deployment.ts"
import * as Secrets from "./Secrets.ts"
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
    yield* lowerPriority(config.workerNice)
    const metaApp = yield* WhatsApp.metaApp(config)
    const keyring = yield* Secrets.keyring(config)
    return yield* Layer.launch(
      Composition.loops(Deployment.loopOptions(config, { webhooks: true, media: true })).pipe(
        Layer.provide(WhatsApp.transport(config)),
        Layer.provide(WhatsApp.mediaDownloader(config)),
        Layer.provide(Deployment.stores(config, metaApp, keyring))
      )
    )
  })

/**
 * A worker sending a campaign keeps its core busy; beside a server on the same host it took the CPU
 * the server's requests were waiting for (`GET /api/me` p99 x2.95 while 100,000 messages went out,
 * bench/CAMPAIGNS.md). So it runs niced (10 unless LEADLINE_WORKER_NICE says otherwise): the work
 * gets every cycle the requests leave. A priority is a thread's on Linux, and V8 and libuv have made
 * theirs by now, so every thread of the process is set (`/proc/self/task`; elsewhere the process).
 * A priority the OS refuses (a negative one without the right) is logged and the worker runs as it is.
 */
const lowerPriority = (nice: number) =>
  Effect.try(() => {
    for (const thread of threads()) setPriority(thread, nice)
  }).pipe(
    Effect.andThen(Effect.logInfo(`Worker running at nice ${nice}`)),
    Effect.catch((error) =>
      Effect.logWarning(`Could not set the worker's priority to nice ${nice}: ${String(error.cause)}`)
    )
  )

const threads = (): ReadonlyArray<number> => {
  try {
    return readdirSync("/proc/self/task").map(Number)
  } catch {
    return [0]
  }
}

import type { Layer } from "effect"
import { afterAll, beforeAll } from "vitest"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { type AccountFixture, makeAccount } from "./Fixtures.ts"
import * as MockReceiver from "./MockReceiver.ts"
import * as TestDatabase from "./TestDatabase.ts"
import * as TestServer from "./TestServer.ts"

/** An app layer for `TestServer.start`, and what to clean up after the server is closed. */
export interface Wired {
  readonly app: Layer.Layer<any, unknown>
  readonly dispose: () => Promise<void>
}

/**
 * The two wirings a test that starts its own server runs on: in memory, and SQL on a fresh
 * database (the PostgreSQL server of `TEST_DATABASE_URL`, else embedded PGlite).
 */
export const wirings: ReadonlyArray<readonly [name: string, wire: () => Promise<Wired>]> = [
  ["in memory", async () => ({ app: MemoryApp.layer, dispose: async () => {} })],
  [
    "on SQL",
    async () => {
      const database = await TestDatabase.make()
      return { app: SqlApp.layer(database.config), dispose: () => database.dispose() }
    }
  ]
]

/** What the tests of a describe on one wiring work with; `stage` fills it in before they run. */
export interface Stage {
  readonly server: TestServer.Running
  readonly receiver: MockReceiver.MockReceiver
  readonly account: AccountFixture
}

/**
 * Registers, in the calling `describe`, a server on the wiring, a webhook receiver it may deliver
 * to and an account on it, made before the tests and closed after them. Read the fields inside
 * hooks and tests only. Webhooks go to private URLs (the receiver) and are polled every 200 ms
 * unless `options.webhooks` says otherwise.
 */
export const stage = (wire: () => Promise<Wired>, options: Omit<TestServer.StartOptions, "app"> = {}): Stage => {
  const staged: { -readonly [K in keyof Stage]?: Stage[K] } = {}
  let dispose: (() => Promise<void>) | undefined
  beforeAll(async () => {
    const made = await wire()
    dispose = made.dispose
    staged.server = await TestServer.start({
      webhooks: { allowPrivateUrls: true, workerOptions: { pollInterval: "200 millis" } },
      ...options,
      app: made.app
    })
    staged.receiver = await MockReceiver.start()
    staged.account = await makeAccount(staged.server)
  })
  afterAll(async () => {
    await staged.receiver?.close()
    await staged.server?.close()
    await dispose?.()
  })
  return staged as Stage
}

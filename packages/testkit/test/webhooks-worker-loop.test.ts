import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import { OutboundSettings } from "@leadline/core/outbound/OutboundSettings"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { Sender } from "@leadline/webhook-worker/Sender"
import * as Worker from "@leadline/webhook-worker/Worker"
import { type AccountFixture, makeAccount, nextPhone } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as MockReceiver from "../src/MockReceiver.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * How the worker's loop waits: woken by a commit rather than by its poll, and,
 * with every slot taken, waiting for a slot rather than looking again and again.
 */

let receiver: MockReceiver.MockReceiver
const cleanups: Array<() => Promise<unknown>> = []
beforeAll(async () => {
  receiver = await MockReceiver.start()
})
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  await receiver?.close()
})

let paths = 0
const subscribe = async (server: TestServer.Running, account: AccountFixture) => {
  const endpoint = receiver.endpoint(`/loop-${++paths}`)
  const registered = await call(server, "POST", "/api/webhooks/endpoints", {
    auth: account.ownerKey,
    json: { url: endpoint.url, events: ["lead.created"] }
  })
  expect(registered.status, registered.text).toBe(201)
  endpoint.setSecret(registered.body.secret)
  return endpoint
}

const createLead = (server: TestServer.Running, account: AccountFixture) =>
  call(server, "POST", "/api/v1/leads", { auth: account.ownerKey, json: { name: "Woken", phone: nextPhone() } })

describe.each([
  ["memory (PubSub)", () => Promise.resolve(MemoryApp.layer)],
  [
    "SQL (LISTEN/NOTIFY; PGlite without TEST_DATABASE_URL)",
    async () => {
      const database = await TestDatabase.make()
      cleanups.push(database.dispose)
      return SqlApp.layer(database.config)
    }
  ]
] as const)("a worker that polls once an hour, on %s", (_name, makeApp) => {
  let server: TestServer.Running
  let account: AccountFixture
  beforeAll(async () => {
    server = await TestServer.start({
      app: await makeApp(),
      webhooks: { allowPrivateUrls: true, workerOptions: { pollInterval: "1 hour" } }
    })
    cleanups.push(() => server.close())
    account = await makeAccount(server)
  }, 60_000)

  it("delivers each event within a second of its commit, woken by it", async () => {
    const endpoint = await subscribe(server, account)
    // Each create after the first finds the worker asleep for the hour, having just delivered
    // the one before: only the commit's signal can bring it back within the hour.
    for (let i = 1; i <= 3; i++) {
      const started = Date.now()
      const lead = await createLead(server, account)
      expect(lead.status).toBe(201)
      const requests = await endpoint.waitFor(i, 30_000)
      const request = requests[i - 1]!
      expect(JSON.parse(request.body).data.id).toBe(lead.body.id)
      // Usually a few ms; the bound holds on a loaded machine and is far below the hour's poll.
      expect(request.receivedAt - started).toBeLessThan(10_000)
    }
    expect(endpoint.requests()).toHaveLength(3)
  })
})

describe("a worker with every slot taken and a backlog due", () => {
  it("waits for a slot to free instead of looking for work, then drains the backlog", async () => {
    const scope = Effect.runSync(Scope.make())
    cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    const app = await Effect.runPromise(
      Layer.buildWithScope(
        MemoryApp.layer.pipe(Layer.provide(Layer.succeed(OutboundSettings, { allowPrivateUrls: true }))),
        scope
      )
    )
    const server = await TestServer.start({ app: Layer.succeedContext(app), webhooks: { worker: false } })
    cleanups.push(() => server.close())
    const account = await makeAccount(server)
    const endpoint = await subscribe(server, account)
    // The first attempt holds the only slot for 1.5 s while two more deliveries are due.
    endpoint.respond({ delayMs: 1_500 })
    for (let i = 0; i < 3; i++) expect((await createLead(server, account)).status).toBe(201)

    // Every look at the queue (nextDueAt or claim) is counted.
    const queue = Context.get(app, DeliveryQueue)
    let looks = 0
    const count = Effect.sync(() => {
      looks++
    })
    const counted = DeliveryQueue.of({
      ...queue,
      claim: (...args) => Effect.andThen(count, queue.claim(...args)),
      nextDueAt: Effect.andThen(count, queue.nextDueAt)
    })
    await Effect.runPromise(
      Layer.buildWithScope(
        Worker.layer({ concurrency: 1, pollInterval: "1 hour" }).pipe(
          Layer.provide(Sender.layer({ allowPrivate: true })),
          Layer.provide(Layer.succeed(DeliveryQueue, counted)),
          Layer.provide(Layer.succeedContext(app))
        ),
        scope
      )
    )

    const [first] = await endpoint.waitFor(1, 10_000)
    looks = 0
    const requests = await endpoint.waitFor(3, 30_000)
    // From the first arrival until the backlog is through: the slot stayed taken 1.5 s, a loop that
    // polled while full would have looked about a hundred times; one that waits looks once or twice
    // when the slot frees, and once more for each delivery it then claims.
    expect(looks).toBeLessThanOrEqual(4)
    expect(new Set(requests.map((request) => request.headers["x-service-event-id"])).size).toBe(3)
    // The backlog waited for the slot: it went out only after the first receiver had answered.
    expect(requests[1]!.receivedAt - first!.receivedAt).toBeGreaterThan(1_400)
  })
})

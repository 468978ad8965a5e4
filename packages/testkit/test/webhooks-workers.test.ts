import { type Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OutboundSettings } from "@leadline/core/outbound/OutboundSettings"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { Sender } from "@leadline/webhook-worker/Sender"
import * as Worker from "@leadline/webhook-worker/Worker"
import { makeAccount, nextPhone } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as MockReceiver from "../src/MockReceiver.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

const DELIVERIES = 2000

let database: TestDatabase.TestDatabase
let scope: Scope.Closeable
let appContext: Context.Context<Layer.Success<ReturnType<typeof SqlApp.layer>>>
let server: TestServer.Running
let receiver: MockReceiver.MockReceiver

beforeAll(async () => {
  database = await TestDatabase.make()
  scope = Effect.runSync(Scope.make())
  // One database for the API and both workers, as separate processes on one server would share it.
  appContext = await Effect.runPromise(
    Layer.buildWithScope(
      SqlApp.layer(database.config).pipe(Layer.provide(Layer.succeed(OutboundSettings, { allowPrivateUrls: true }))),
      scope
    )
  )
  server = await TestServer.start({ app: Layer.succeedContext(appContext), webhooks: { worker: false } })
  receiver = await MockReceiver.start()
}, 60_000)
afterAll(async () => {
  await receiver?.close()
  await server?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await database?.dispose()
})

const startWorker = (id: string) =>
  Effect.runPromise(
    Layer.buildWithScope(
      Worker.layer({ id, concurrency: 16, pollInterval: "200 millis" }).pipe(
        Layer.provide(Sender.layer({ allowPrivate: true })),
        Layer.provide(Layer.succeedContext(appContext))
      ),
      scope
    )
  )

describe(`two workers on one database draining ${DELIVERIES} deliveries`, () => {
  it("deliver every one, and none twice", async () => {
    const account = await makeAccount(server)
    const endpoint = receiver.endpoint("/drain")
    const registered = await call(server, "POST", "/api/webhooks/endpoints", {
      auth: account.ownerKey,
      json: { url: endpoint.url, events: ["lead.created"] }
    })
    endpoint.setSecret(registered.body.secret)
    // The backlog is made first, so both workers start with work to split.
    for (let batch = 0; batch < DELIVERIES / 50; batch++) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, () =>
          call(server, "POST", "/api/v1/leads", { auth: account.ownerKey, json: { name: "Drain", phone: nextPhone() } })
        )
      )
      expect(replies.every((reply) => reply.status === 201)).toBe(true)
    }

    await Promise.all([startWorker("worker-a"), startWorker("worker-b")])
    const requests = await endpoint.waitFor(DELIVERIES, 120_000)
    await new Promise((resolve) => setTimeout(resolve, 1000))

    const eventIds = endpoint.requests().map((request) => request.headers["x-service-event-id"])
    expect(new Set(eventIds).size).toBe(DELIVERIES)
    expect(endpoint.requests()).toHaveLength(DELIVERIES)
    expect(requests.every((request) => request.headers["x-service-delivery-attempt"] === "1")).toBe(true)
    // Every delivery ended delivered, so the status filter must put all of them under
    // `delivered` and none under the others (an ignored filter would list them everywhere).
    const logPage = async (query: string) => {
      const log = await call(server, "GET", `/api/webhooks/deliveries?endpoint_id=${registered.body.id}${query}`, {
        auth: account.ownerKey
      })
      expect(log.status, log.text).toBe(200)
      return { total: log.body.meta.total, statuses: log.body.deliveries.map((d: { status: string }) => d.status) }
    }
    expect(await logPage("&limit=3")).toEqual({ total: DELIVERIES, statuses: ["delivered", "delivered", "delivered"] })
    expect(await logPage("&status=delivered&limit=3")).toEqual({
      total: DELIVERIES,
      statuses: ["delivered", "delivered", "delivered"]
    })
    expect(await logPage("&status=pending")).toEqual({ total: 0, statuses: [] })
    expect(await logPage("&status=failed")).toEqual({ total: 0, statuses: [] })
  }, 240_000)
})

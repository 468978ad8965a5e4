import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { type AccountFixture, makeAccount, nextPhone } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as MockReceiver from "../src/MockReceiver.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * A receiver down for ten minutes, on the `extended` retry policy (docs/contract.md, "Webhooks"):
 * the server's clock is moved through the outage rather than waited out. Every event reaches the
 * receiver once it is back, each delivered once.
 */
let database: TestDatabase.TestDatabase
let server: TestServer.Running
let receiver: MockReceiver.MockReceiver
let account: AccountFixture

beforeAll(async () => {
  database = await TestDatabase.make()
  server = await TestServer.start({
    app: SqlApp.layer(database.config),
    webhooks: { allowPrivateUrls: true, workerOptions: { pollInterval: "100 millis" } }
  })
  receiver = await MockReceiver.start()
  account = await makeAccount(server)
})
afterAll(async () => {
  await receiver?.close()
  await server?.close()
  await database?.dispose()
})

const deliveriesOf = async (endpointId: string) =>
  (
    await call(server, "GET", `/api/webhooks/deliveries?endpoint_id=${endpointId}&limit=100`, {
      auth: account.ownerKey
    })
  ).body.deliveries as Array<{ event_id: string; status: string; attempts: Array<{ status_code: number | null }> }>

const settle = async (endpointId: string, attempts: number, expected: number) => {
  const deadline = Date.now() + 20_000
  for (;;) {
    const list = await deliveriesOf(endpointId)
    if (list.length === expected && list.every((delivery) => delivery.attempts.length >= attempts)) return list
    if (Date.now() > deadline) throw new Error(`deliveries did not reach ${attempts} attempts: ${JSON.stringify(list)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("a receiver down for ten minutes, on the extended policy", () => {
  it("gets every event once it is back, none twice", async () => {
    const endpoint = receiver.endpoint("/outage")
    const registered = await call(server, "POST", "/api/webhooks/endpoints", {
      auth: account.ownerKey,
      json: { url: endpoint.url, events: ["lead.created", "lead.updated"], retry_policy: "extended" }
    })
    expect(registered.status, registered.text).toBe(201)
    endpoint.setSecret(registered.body.secret)
    const EVENTS = 6
    // Down: every attempt of the outage answers 503 (three rounds of six).
    endpoint.respond(...Array.from({ length: EVENTS * 3 }, () => ({ status: 503 })))
    for (const name of ["Ada", "Bo"]) {
      const lead = await call(server, "POST", "/api/v1/leads", {
        auth: account.ownerKey,
        json: { name, phone: nextPhone() }
      })
      expect(lead.status).toBe(201)
      for (const status of ["contacted", "qualified"]) {
        const patched = await call(server, "PATCH", `/api/v1/leads/${lead.body.id}`, {
          auth: account.ownerKey,
          json: { status }
        })
        expect(patched.status).toBe(200)
      }
    }
    const id = registered.body.id as string
    await settle(id, 1, EVENTS)
    server.clock.advance("6 seconds")
    await settle(id, 2, EVENTS)
    server.clock.advance("5 minutes")
    await settle(id, 3, EVENTS)
    // Ten minutes into the outage the receiver is back; the next attempt is 30 minutes after the third.
    server.clock.advance("5 minutes")
    expect((await deliveriesOf(id)).every((delivery) => delivery.status === "pending")).toBe(true)
    server.clock.advance("26 minutes")
    const done = await settle(id, 4, EVENTS)
    expect(done.map((delivery) => delivery.status)).toEqual(Array(EVENTS).fill("delivered"))
    // The outage's eighteen answers were 503s; every request after them was answered 200.
    const delivered = endpoint.requests().slice(EVENTS * 3)
    const eventIds = delivered.map((request) => request.headers["webhook-id"])
    expect(new Set(eventIds).size).toBe(EVENTS)
    expect(eventIds.sort()).toEqual(done.map((delivery) => delivery.event_id).sort())
  })
})

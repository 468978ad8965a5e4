import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { type AccountFixture, makeAccount, nextPhone } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { settled } from "../src/internal/wire.ts"
import * as MockReceiver from "../src/MockReceiver.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * A receiver down for ten minutes, on the `extended` retry policy (docs/contract.md, "Webhooks"):
 * the server's clock is moved through the outage rather than waited out. Every event reaches the
 * receiver once it is back, each delivered once and each lead's in the order they happened. On
 * memory, PGlite and PostgreSQL (TestDatabase.STORES).
 */
describe.each(TestDatabase.STORES)("on $name", ({ database: options }) => {
  let database: TestDatabase.TestDatabase | undefined
  let server: TestServer.Running
  let receiver: MockReceiver.MockReceiver
  let account: AccountFixture

  beforeAll(async () => {
    database = options === undefined ? undefined : await TestDatabase.make(options)
    server = await TestServer.start({
      ...(database === undefined ? {} : { app: SqlApp.layer(database.config) }),
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
    ).body.deliveries as Array<{
      event_id: string
      event_type: string
      status: string
      attempts: Array<{ status_code: number | null }>
    }>

  type Listed = Awaited<ReturnType<typeof deliveriesOf>>

  /** Polls the delivery log until `done` holds (the worker runs on its own), for up to 20 s. */
  const settle = (endpointId: string, what: string, done: (list: Listed) => boolean) =>
    settled(`deliveries ${what}`, () => deliveriesOf(endpointId), done)

  describe("a receiver down for ten minutes, on the extended policy", () => {
    it("gets every event once it is back, none twice, each lead's in order", async () => {
      const endpoint = receiver.endpoint("/outage")
      const registered = await call(server, "POST", "/api/webhooks/endpoints", {
        auth: account.ownerKey,
        json: { url: endpoint.url, events: ["lead.created", "lead.updated"], retry_policy: "extended" }
      })
      expect(registered.status, registered.text).toBe(201)
      endpoint.setSecret(registered.body.secret)
      const LEADS = 2
      const EVENTS = LEADS * 3
      // Down: every attempt of the outage answers 503. One lead's events go one at a time, so only
      // each lead's first event is tried during it (three rounds), the others waiting behind it.
      endpoint.respond(...Array.from({ length: LEADS * 3 }, () => ({ status: 503 })))
      const created: Array<string> = []
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
        created.push(lead.body.id)
      }
      const id = registered.body.id as string
      const triedOnly = (attempts: number) => (list: Listed) =>
        list.length === EVENTS &&
        list.every((delivery) =>
          delivery.event_type === "lead.created"
            ? delivery.attempts.length === attempts
            : delivery.attempts.length === 0 && delivery.status === "pending"
        )
      await settle(id, "tried each lead's first event once", triedOnly(1))
      server.clock.advance("6 seconds")
      await settle(id, "tried each lead's first event twice", triedOnly(2))
      server.clock.advance("5 minutes")
      await settle(id, "tried each lead's first event three times", triedOnly(3))
      // Ten minutes into the outage the receiver is back; the next attempt is 30 minutes after the third.
      server.clock.advance("5 minutes")
      expect(triedOnly(3)(await deliveriesOf(id))).toBe(true)
      server.clock.advance("26 minutes")
      const done = await settle(id, "all delivered", (list) =>
        list.every((delivery) => delivery.status === "delivered")
      )
      expect(done).toHaveLength(EVENTS)
      // The outage's six answers were 503s; every request after them was answered 200, once per event.
      const delivered = endpoint.requests().slice(LEADS * 3)
      const eventIds = delivered.map((request) => request.headers["webhook-id"])
      expect(new Set(eventIds).size).toBe(EVENTS)
      expect([...eventIds].sort()).toEqual(done.map((delivery) => delivery.event_id).sort())
      // Per lead, the order received after the outage is the order the events happened in.
      const byLead = new Map<string, Array<string>>()
      for (const request of delivered) {
        const event = JSON.parse(request.body) as { type: string; data: { id: string; status: string } }
        byLead.set(event.data.id, [...(byLead.get(event.data.id) ?? []), `${event.type}:${event.data.status}`])
      }
      expect(created.map((lead) => byLead.get(lead))).toEqual([
        ["lead.created:new", "lead.updated:contacted", "lead.updated:qualified"],
        ["lead.created:new", "lead.updated:contacted", "lead.updated:qualified"]
      ])
    })
  })
})

import { Schema } from "effect"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Event from "@leadline/core/EventCatalog"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { type AccountFixture, makeAccount, nextPhone } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as MockReceiver from "../src/MockReceiver.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * Webhook delivery end to end: the API on a SQL database (PostgreSQL when
 * TEST_DATABASE_URL is set), the worker inside the server as in production,
 * and the mock receiver on a real socket.
 */

let database: TestDatabase.TestDatabase
let server: TestServer.Running
let receiver: MockReceiver.MockReceiver
let account: AccountFixture
let other: AccountFixture
let paths = 0

beforeAll(async () => {
  database = await TestDatabase.make()
  server = await TestServer.start({
    app: SqlApp.layer(database.config),
    webhooks: { allowPrivateUrls: true, workerOptions: { pollInterval: "200 millis" } }
  })
  receiver = await MockReceiver.start()
  account = await makeAccount(server, { keys: { writer: ["leads:write"] } })
  other = await makeAccount(server)
})
afterAll(async () => {
  await receiver?.close()
  await server?.close()
  await database?.dispose()
})

/** A fresh receiver endpoint registered for `events`, with its secret set. */
const subscribe = async (events: ReadonlyArray<string>, owner: AccountFixture = account) => {
  const endpoint = receiver.endpoint(`/hook-${++paths}`)
  const registered = await call(server, "POST", "/api/webhooks/endpoints", {
    auth: owner.ownerKey,
    json: { url: endpoint.url, events, description: "test receiver" }
  })
  expect(registered.status, registered.text).toBe(201)
  endpoint.setSecret(registered.body.secret)
  return { endpoint, registered: registered.body }
}

const createLead = (owner: AccountFixture = account) =>
  call(server, "POST", "/api/v1/leads", { auth: owner.ownerKey, json: { name: "Hooked", phone: nextPhone() } })

const deliveriesOf = async (endpointId: string, owner: AccountFixture = account) =>
  (await call(server, "GET", `/api/webhooks/deliveries?endpoint_id=${endpointId}`, { auth: owner.ownerKey })).body
    .deliveries as Array<{
    id: string
    status: string
    event_id: string
    next_attempt_at: string | null
    attempts: Array<{ status_code: number | null; duration_ms: number; error: string | null }>
  }>

const until = async <A>(probe: () => Promise<A>, done: (value: A) => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  let value = await probe()
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    value = await probe()
  }
  return value
}

let sentinelAccount: AccountFixture | undefined
/**
 * A positive signal that the worker has claimed and sent since the call: an event of
 * an account of its own reaches its own endpoint and is recorded delivered. What a
 * test then finds missing was not merely late.
 */
const workerCycle = async () => {
  sentinelAccount ??= await makeAccount(server)
  const { endpoint, registered } = await subscribe(["lead.created"], sentinelAccount)
  await createLead(sentinelAccount)
  await endpoint.waitFor(1, 10_000)
  const [delivery] = await until(
    () => deliveriesOf(registered.id, sentinelAccount),
    (list) => list[0]?.status === "delivered"
  )
  expect(delivery!.status).toBe("delivered")
}

/** The requests by their `X-Service-Event`: the contract promises no order, even between one lead's events. */
const byEvent = (requests: ReadonlyArray<MockReceiver.RecordedRequest>) =>
  Object.fromEntries(requests.map((request) => [request.headers["x-service-event"], request]))

const gaps = (requests: ReadonlyArray<MockReceiver.RecordedRequest>) =>
  requests.slice(1).map((request, i) => (request.receivedAt - requests[i]!.receivedAt) / 1000)

describe("webhook endpoints", () => {
  it("registers with a whsec_ secret shown once, lists without secrets, and needs full access", async () => {
    const { registered } = await subscribe(["lead.created"])
    expect(registered).toMatchObject({ events: ["lead.created"], description: "test receiver", enabled: true })
    expect(registered.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(registered.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const list = await call(server, "GET", "/api/webhooks/endpoints", { auth: account.ownerKey })
    expect(list.status).toBe(200)
    expect(list.body.meta.total).toBeGreaterThanOrEqual(1)
    expect(list.text).not.toContain("whsec_")
    const scoped = await call(server, "GET", "/api/webhooks/endpoints", { auth: account.keys.writer!.apiKey })
    expect(scoped.status).toBe(403)
    expect(scoped.body).toEqual({ error: "Insufficient scope: requires full access", code: "forbidden" })
  })

  it("validates events and description", async () => {
    const url = receiver.endpoint("/validation").url
    for (const [json, path] of [
      [{ url, events: [] }, "events"],
      [{ url, events: ["lead.created", "lead.created"] }, "events"],
      [{ url, events: ["lead.exploded"] }, "events.0"],
      [{ url, events: ["lead.created"], description: "x".repeat(501) }, "description"]
    ] as const) {
      const reply = await call(server, "POST", "/api/webhooks/endpoints", { auth: account.ownerKey, json })
      expect(reply.status, JSON.stringify(json)).toBe(400)
      expect(reply.body.details.map((detail: { path: string }) => detail.path)).toContain(path)
    }
  })
})

describe("delivery", () => {
  it("delivers a created and a deleted lead, signed both ways, with the exact headers", async () => {
    const { endpoint, registered } = await subscribe(["lead.created", "lead.deleted"])
    const lead = await createLead()
    await call(server, "DELETE", `/api/v1/leads/${lead.body.id}`, { auth: account.ownerKey })
    const received = byEvent(await endpoint.waitFor(2, 10_000))
    expect(Object.keys(received).sort()).toEqual(["lead.created", "lead.deleted"])
    for (const type of ["lead.created", "lead.deleted"] as const) {
      const request = received[type]!
      const body = JSON.parse(request.body)
      expect(request.verified).toEqual({ service: true, standard: true })
      // The body is what core's schema for the type says it is.
      expect(Schema.decodeUnknownSync(Event.Envelopes[type])(body)).toEqual(body)
      // An off-the-shelf verifier accepts exactly what went over the wire, and only with the right secret.
      expect(new Webhook(registered.secret).verify(request.body, request.headers)).toEqual(body)
      const stranger = new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`)
      expect(() => stranger.verify(request.body, request.headers)).toThrow("No matching signature found")
      expect(body).toEqual({
        id: body.id,
        type,
        created_at: body.created_at,
        account_id: account.accountId,
        data: lead.body
      })
      expect(body.id).toMatch(/^evt_[0-9a-z]{26}$/)
      const timestamp = Number(request.headers["x-service-timestamp"])
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(30)
      expect(request.headers).toMatchObject({
        "content-type": "application/json",
        "x-service-event": type,
        "x-service-event-id": body.id,
        "x-service-delivery-attempt": "1",
        "webhook-id": body.id,
        "webhook-timestamp": String(timestamp)
      })
      expect(request.headers["x-service-signature"]).toMatch(/^[0-9a-f]{64}$/)
      expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
      expect(request.method).toBe("POST")
    }
  })

  it("retries a 500 and a 503 after about 1 s and 2 s, with one event id", async () => {
    const { endpoint, registered } = await subscribe(["lead.created"])
    endpoint.respond({ status: 500 }, { status: 503 })
    await createLead()
    const requests = await endpoint.waitFor(3, 15_000)
    expect(new Set(requests.map((request) => request.headers["x-service-event-id"])).size).toBe(1)
    expect(requests.map((request) => request.headers["x-service-delivery-attempt"])).toEqual(["1", "2", "3"])
    // A busy machine only delays an attempt: the lower bounds and the doubling hold under load,
    // the upper bounds are far from the next step of the schedule (4 s, then giving up).
    const [first, second] = gaps(requests)
    expect(first).toBeGreaterThan(0.8)
    expect(second).toBeGreaterThan(1.8)
    expect(second).toBeGreaterThan(first!)
    expect(first).toBeLessThan(1.8 + 2)
    expect(second).toBeLessThan(3.6 + 2)
    const [delivery] = await until(
      () => deliveriesOf(registered.id),
      (list) => list[0]?.status === "delivered"
    )
    expect(delivery!.attempts.map((attempt) => attempt.status_code)).toEqual([500, 503, 200])
  })

  it("gives up after four failures 1, 2 and 4 s apart, then redelivers on request", async () => {
    const { endpoint, registered } = await subscribe(["lead.created"])
    endpoint.respond({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 })
    await createLead()
    const requests = await endpoint.waitFor(4, 20_000)
    const [a, b, c] = gaps(requests)
    expect(a).toBeGreaterThan(0.8)
    expect(b).toBeGreaterThan(1.8)
    expect(c).toBeGreaterThan(3.8)
    expect(b).toBeGreaterThan(a!)
    expect(c).toBeGreaterThan(b!)
    expect(c).toBeLessThan(7.2 + 2)
    const [failed] = await until(
      () => deliveriesOf(registered.id),
      (list) => list[0]?.status === "failed"
    )
    expect(failed!.attempts).toHaveLength(4)
    await workerCycle()
    expect(endpoint.requests()).toHaveLength(4)
    expect((await deliveriesOf(registered.id))[0]!.attempts).toHaveLength(4)

    const redelivered = await call(server, "POST", `/api/webhooks/deliveries/redeliver?id=${failed!.id}`, {
      auth: account.ownerKey
    })
    expect(redelivered.status).toBe(200)
    expect(redelivered.body.status).toBe("pending")
    const again = await endpoint.waitFor(5, 10_000)
    expect(again[4]!.headers["x-service-event-id"]).toBe(failed!.event_id)
    expect(again[4]!.headers["x-service-delivery-attempt"]).toBe("1")
    const [delivered] = await until(
      () => deliveriesOf(registered.id),
      (list) => list[0]?.status === "delivered"
    )
    expect(delivered!.attempts.map((attempt) => attempt.status_code)).toEqual([500, 500, 500, 500, 200])
  })

  it("retries an extended endpoint after about 5 s, then waits five minutes", async () => {
    const endpoint = receiver.endpoint(`/hook-${++paths}`)
    const registered = await call(server, "POST", "/api/webhooks/endpoints", {
      auth: account.ownerKey,
      json: { url: endpoint.url, events: ["lead.created"], retry_policy: "extended" }
    })
    expect(registered.status, registered.text).toBe(201)
    endpoint.setSecret(registered.body.secret)
    endpoint.respond({ status: 503 }, { status: 503 })
    await createLead()
    const requests = await endpoint.waitFor(2, 20_000)
    const [gap] = gaps(requests)
    // A busy machine only delays an attempt: the lower bound holds under load, the upper is far from 5 min.
    expect(gap).toBeGreaterThan(4.8)
    expect(gap).toBeLessThan(5 + 30)
    // The log reads a delivery and its attempts in two statements: it may show the second attempt beside
    // the row as it was before it, so it is read until the row has moved on too.
    const [delivery] = await until(
      () => deliveriesOf(registered.body.id),
      (list) =>
        list[0]?.attempts.length === 2 &&
        list[0].next_attempt_at !== null &&
        Date.parse(list[0].next_attempt_at) > requests[1]!.receivedAt + 1_000
    )
    expect(delivery!.status).toBe("pending")
    // The third attempt is five minutes after the second (the seed's schedule would have given up after 4 s more).
    const wait = Date.parse(delivery!.next_attempt_at!) - requests[1]!.receivedAt
    expect(wait).toBeGreaterThan(299_000)
    expect(wait).toBeLessThan(330_000)
  })

  it("treats a 302 as a failure and does not follow it", async () => {
    const target = receiver.endpoint(`/redirect-target-${++paths}`)
    const { endpoint, registered } = await subscribe(["lead.created"])
    endpoint.respond({ status: 302, headers: { location: target.url } })
    await createLead()
    await endpoint.waitFor(2, 10_000)
    const [delivery] = await until(
      () => deliveriesOf(registered.id),
      (list) => list[0]?.status === "delivered"
    )
    expect(delivery!.attempts.map((attempt) => [attempt.status_code, attempt.error])).toEqual([
      [302, "HTTP 302"],
      [200, null]
    ])
    expect(target.requests()).toHaveLength(0)
  })

  it("times a hanging receiver out at 10 s without holding up other endpoints", async () => {
    const hanging = await subscribe(["lead.created"])
    const healthy = await subscribe(["lead.created"])
    hanging.endpoint.respond({ hang: true })
    const started = Date.now()
    await createLead()
    await healthy.endpoint.waitFor(1, 5_000)
    expect(Date.now() - started).toBeLessThan(3_000)
    const [delivery] = await until(
      () => deliveriesOf(hanging.registered.id),
      (list) => list[0]?.status === "delivered",
      20_000
    )
    expect(delivery!.attempts[0]).toMatchObject({ status_code: null, error: "timed out after 10 s" })
    expect(delivery!.attempts[0]!.duration_ms).toBeGreaterThanOrEqual(9_500)
    expect(delivery!.attempts[0]!.duration_ms).toBeLessThanOrEqual(11_500)
    expect(delivery!.attempts[1]).toMatchObject({ status_code: 200, error: null })
    const [first, second] = hanging.endpoint.requests()
    // 10 s timeout, then the 1 s retry delay.
    const gap = (second!.receivedAt - first!.receivedAt) / 1000
    expect(gap).toBeGreaterThan(10.5)
    expect(gap).toBeLessThan(12.5)
  }, 40_000)
})

describe("who gets what", () => {
  it("sends only subscribed types, never another account's events, and nothing after deletion", async () => {
    const deletesOnly = await subscribe(["lead.deleted"])
    const all = await subscribe(["lead.created", "lead.deleted"])
    await createLead(other)
    const lead = await createLead()
    await call(server, "DELETE", `/api/v1/leads/${lead.body.id}`, { auth: account.ownerKey })
    const received = await all.endpoint.waitFor(2, 10_000)
    expect(Object.keys(byEvent(received)).sort()).toEqual(["lead.created", "lead.deleted"])
    expect(received.every((request) => JSON.parse(request.body).account_id === account.accountId)).toBe(true)
    const [deletion] = await deletesOnly.endpoint.waitFor(1, 10_000)
    expect(deletion!.headers["x-service-event"]).toBe("lead.deleted")

    const removed = await call(server, "DELETE", `/api/webhooks/endpoints?id=${all.registered.id}`, {
      auth: account.ownerKey
    })
    expect(removed.body).toEqual({ id: all.registered.id, deleted: true })
    await createLead()
    // The deleted endpoint got no delivery for the new lead (queued in the create's own transaction),
    // and the worker has been round since.
    expect(await deliveriesOf(all.registered.id)).toHaveLength(2)
    await workerCycle()
    expect(all.endpoint.requests()).toHaveLength(2)
    expect(deletesOnly.endpoint.requests()).toHaveLength(1)
    const missing = await call(server, "DELETE", `/api/webhooks/endpoints?id=${all.registered.id}`, {
      auth: account.ownerKey
    })
    expect(missing.status).toBe(404)
    const badId = await call(server, "DELETE", "/api/webhooks/endpoints?id=nope", { auth: account.ownerKey })
    expect(badId.status).toBe(400)
  })

  it("cancels pending deliveries of a deleted endpoint", async () => {
    const { endpoint, registered } = await subscribe(["lead.created"])
    endpoint.respond({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 })
    await createLead()
    await endpoint.waitFor(1, 10_000)
    const [retrying] = await until(
      () => deliveriesOf(registered.id),
      (list) => list[0]?.attempts.length === 1
    )
    const retryAt = Date.parse(retrying!.next_attempt_at!)
    await call(server, "DELETE", `/api/webhooks/endpoints?id=${registered.id}`, { auth: account.ownerKey })
    const [delivery] = await deliveriesOf(registered.id)
    expect(delivery!.status).toBe("cancelled")
    // Once the retry would have been due, a full round of the worker sends nothing to it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, retryAt - Date.now())))
    await workerCycle()
    expect(endpoint.requests()).toHaveLength(1)
    expect((await deliveriesOf(registered.id))[0]!.attempts).toHaveLength(1)
    const redeliver = await call(server, "POST", `/api/webhooks/deliveries/redeliver?id=${delivery!.id}`, {
      auth: account.ownerKey
    })
    expect(redeliver.status).toBe(409)
  })
})

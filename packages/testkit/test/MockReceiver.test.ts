import { randomBytes } from "node:crypto"
import { sign, signStandard } from "@leadline/core/webhooks/Signature"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as MockReceiver from "../src/MockReceiver.ts"

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`

const eventBody = (id: string) =>
  JSON.stringify({
    id,
    type: "lead.created",
    created_at: "2025-01-01T00:00:00.000Z",
    account_id: "acc_1",
    data: { id: "ld_1", name: "Ada Lovelace" }
  })

/** The headers Leadline sends with a delivery of `body`, both schemes signed with `secret`. */
const signedHeaders = async (secret: string, id: string, body: string): Promise<Record<string, string>> => {
  const timestamp = Math.floor(Date.now() / 1000)
  return {
    "Content-Type": "application/json",
    "X-Service-Event": "lead.created",
    "X-Service-Signature": await sign(secret, body),
    "X-Service-Timestamp": String(timestamp),
    "X-Service-Event-Id": id,
    "X-Service-Delivery-Attempt": "1",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signStandard(secret, id, timestamp, body)
  }
}

/** Fails instead of waiting out the test timeout when `promise` takes longer than `ms`. */
const within = <A>(ms: number, promise: Promise<A>): Promise<A> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms))
  ])

const post = (url: string, body = "{}", init: RequestInit = {}) => fetch(url, { method: "POST", body, ...init })

describe("MockReceiver", () => {
  let receiver: MockReceiver.MockReceiver

  beforeEach(async () => {
    receiver = await MockReceiver.start()
  })
  afterEach(async () => {
    await receiver.close()
  })

  it("records a delivery and verifies both signature schemes", async () => {
    const secret = newSecret()
    const endpoint = receiver.endpoint("/hooks/a")
    endpoint.setSecret(secret)
    const body = eventBody("evt_1")
    const before = Date.now()

    const response = await post(endpoint.url, body, { headers: await signedHeaders(secret, "evt_1", body) })

    expect(response.status).toBe(200)
    expect(endpoint.url).toBe(`${receiver.url}/hooks/a`)
    const [request] = endpoint.requests()
    expect(endpoint.requests()).toHaveLength(1)
    expect(request.method).toBe("POST")
    expect(request.path).toBe("/hooks/a")
    expect(request.body).toBe(body)
    expect(request.headers["x-service-event"]).toBe("lead.created")
    expect(request.headers["x-service-event-id"]).toBe("evt_1")
    expect(request.headers["content-type"]).toBe("application/json")
    expect(request.receivedAt).toBeGreaterThanOrEqual(before)
    expect(request.receivedAt).toBeLessThanOrEqual(Date.now())
    expect(request.verified).toEqual({ service: true, standard: true })
    expect(receiver.all()).toEqual([request])
  })

  it("keeps endpoints apart by path", async () => {
    const a = receiver.endpoint("/a")
    const b = receiver.endpoint("b")
    await post(a.url, "to a")
    await post(`${b.url}?attempt=1`, "to b")

    expect(b.path).toBe("/b")
    expect(a.requests().map((request) => request.body)).toEqual(["to a"])
    expect(b.requests().map((request) => request.body)).toEqual(["to b"])
    expect(receiver.all().map((request) => request.path)).toEqual(["/a", "/b"])
  })

  it("marks a tampered body, a wrong secret and a missing secret unverified", async () => {
    const secret = newSecret()
    const endpoint = receiver.endpoint("/hooks/tampered")
    endpoint.setSecret(secret)
    const body = eventBody("evt_2")
    const headers = await signedHeaders(secret, "evt_2", body)

    await post(endpoint.url, body.replace("Ada", "Eve"), { headers })
    endpoint.setSecret(newSecret())
    await post(endpoint.url, body, { headers })
    endpoint.setSecret(undefined)
    await post(endpoint.url, body, { headers })

    expect(endpoint.requests().map((request) => request.verified)).toEqual([
      { service: false, standard: false },
      { service: false, standard: false },
      { service: false, standard: false }
    ])
  })

  it("rejects signed timestamps outside the tolerance, measured on the clock it is given", async () => {
    await receiver.close()
    const oneHourAhead = () => Math.floor(Date.now() / 1000) + 3600
    receiver = await MockReceiver.start({ now: oneHourAhead, toleranceSeconds: 60 })
    const secret = newSecret()
    const endpoint = receiver.endpoint("/clock")
    endpoint.setSecret(secret)
    const body = eventBody("evt_3")

    await post(endpoint.url, body, { headers: await signedHeaders(secret, "evt_3", body) })

    expect(endpoint.requests()[0].verified).toEqual({ service: false, standard: false })
  })

  it("plays its queue of statuses, then answers 200", async () => {
    const endpoint = receiver.endpoint("/flaky")
    endpoint.respond({ status: 500 }, { status: 503, headers: { "retry-after": "1" } })

    const responses = []
    for (let i = 0; i < 4; i++) responses.push(await post(endpoint.url))

    expect(responses.map((response) => response.status)).toEqual([500, 503, 200, 200])
    expect(responses[1].headers.get("retry-after")).toBe("1")
    expect(endpoint.requests()).toHaveLength(4)
  })

  it("delays an answer, having recorded the request on arrival", async () => {
    const endpoint = receiver.endpoint("/slow")
    endpoint.respond({ delayMs: 300, status: 202 })
    const started = Date.now()

    const pending = post(endpoint.url)
    const [request] = await endpoint.waitFor(1, 1_000)
    const response = await pending

    expect(response.status).toBe(202)
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    expect(request.receivedAt - started).toBeLessThan(250)
  })

  it("hangs until the sender gives up, and still closes promptly", async () => {
    const endpoint = receiver.endpoint("/hang")
    endpoint.respond({ hang: true })

    const error = await post(endpoint.url, "waiting", { signal: AbortSignal.timeout(200) }).catch((e: unknown) => e)

    expect((error as Error).name).toBe("TimeoutError")
    expect(endpoint.requests().map((request) => request.body)).toEqual(["waiting"])
    await within(1_000, receiver.close())
  })

  it("closes a hung connection the sender is still waiting on", async () => {
    const endpoint = receiver.endpoint("/hang")
    endpoint.respond({ hang: true })

    const pending = post(endpoint.url).then(
      () => "answered",
      () => "failed"
    )
    await endpoint.waitFor(1, 1_000)
    await within(1_000, receiver.close())

    expect(await pending).toBe("failed")
  })

  it("drops the connection without answering", async () => {
    const endpoint = receiver.endpoint("/drop")
    endpoint.respond({ close: true })

    await expect(post(endpoint.url, "dropped")).rejects.toThrow(TypeError)
    expect(endpoint.requests().map((request) => request.body)).toEqual(["dropped"])
    expect((await post(endpoint.url)).status).toBe(200)
  })

  it("waits for requests that arrive later", async () => {
    const endpoint = receiver.endpoint("/later")
    const waiting = endpoint.waitFor(2, 2_000)

    await post(endpoint.url, "first")
    await post(endpoint.url, "second")

    expect((await waiting).map((request) => request.body)).toEqual(["first", "second"])
  })

  it("says what it waited for when the wait times out", async () => {
    const endpoint = receiver.endpoint("/quiet")
    await post(endpoint.url)

    await expect(endpoint.waitFor(2, 100)).rejects.toThrow(
      "MockReceiver: waited 100 ms for 2 request(s) to /quiet, got 1"
    )
  })

  it("fails pending waits when closed", async () => {
    const waiting = receiver.endpoint("/never").waitFor(1, 10_000)

    await receiver.close()

    await expect(waiting).rejects.toThrow("MockReceiver: closed while waiting for 1 request(s) to /never")
  })
})

import { randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { sign, signStandard } from "@leadline/core/webhooks/Signature"
import { Webhook } from "standardwebhooks"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { makeHandler, type WebhookEvent } from "../src/Receiver.ts"

const secret = `whsec_${randomBytes(32).toString("base64")}`

const eventBody = (id: string) =>
  JSON.stringify({
    id,
    type: "lead.created",
    created_at: "2025-01-01T00:00:00.000Z",
    account_id: "acc_1",
    data: { id: "ld_1", name: "Ada Lovelace" }
  })

/** The headers Leadline sends with a delivery of `body`. */
const signedHeaders = async (id: string, body: string): Promise<Record<string, string>> => {
  const timestamp = Math.floor(Date.now() / 1000)
  return {
    "content-type": "application/json",
    "x-service-event": "lead.created",
    "x-service-signature": await sign(secret, body),
    "x-service-timestamp": String(timestamp),
    "x-service-event-id": id,
    "x-service-delivery-attempt": "1",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signStandard(secret, id, timestamp, body)
  }
}

describe("webhook receiver example", () => {
  let server: Server
  let url: string
  let received: Array<WebhookEvent>

  beforeEach(async () => {
    received = []
    server = createServer(makeHandler({ secret, onEvent: (event) => void received.push(event) }))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/leadline`
  })
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve))
  })

  const deliver = (body: string, headers: Record<string, string>) => fetch(url, { method: "POST", body, headers })

  it("answers 200 to a signed delivery and hands the event on", async () => {
    const body = eventBody("evt_good")
    const response = await deliver(body, await signedHeaders("evt_good", body))

    expect(response.status).toBe(200)
    expect(received).toEqual([JSON.parse(body)])
  })

  it("answers 401 to a tampered body and hands nothing on", async () => {
    const body = eventBody("evt_tampered")
    const headers = await signedHeaders("evt_tampered", body)
    const response = await deliver(body.replace("Ada", "Eve"), headers)

    expect(response.status).toBe(401)
    expect(await response.json()).toEqual({ error: "bad_signature" })
    expect(received).toEqual([])
  })

  it("answers 401 without a signature or with a stale timestamp", async () => {
    const body = eventBody("evt_stale")
    const headers = await signedHeaders("evt_stale", body)
    const { "x-service-signature": _, ...unsigned } = headers

    expect((await deliver(body, unsigned)).status).toBe(401)
    const hourAgo = String(Math.floor(Date.now() / 1000) - 3600)
    expect((await deliver(body, { ...headers, "x-service-timestamp": hourAgo })).status).toBe(401)
    expect(received).toEqual([])
  })

  it("answers 200 to a replayed event but hands it on once", async () => {
    const body = eventBody("evt_replayed")
    const first = await deliver(body, await signedHeaders("evt_replayed", body))
    const again = await deliver(body, {
      ...(await signedHeaders("evt_replayed", body)),
      "x-service-delivery-attempt": "2"
    })

    expect([first.status, again.status]).toEqual([200, 200])
    expect(received.map((event) => event.id)).toEqual(["evt_replayed"])
  })

  it("answers 413 to a body over 1 MiB", async () => {
    const body = JSON.stringify({ id: "evt_big", padding: "x".repeat(1024 * 1024) })
    const response = await deliver(body, await signedHeaders("evt_big", body))

    expect(response.status).toBe(413)
    expect(received).toEqual([])
  })

  it("accepts only what the standardwebhooks library accepts", async () => {
    const webhook = new Webhook(secret)
    const body = eventBody("evt_library")
    const headers = await signedHeaders("evt_library", body)
    const tampered = body.replace("Ada", "Eve")

    expect((await deliver(body, headers)).status).toBe(200)
    expect(webhook.verify(body, headers)).toEqual(JSON.parse(body))
    expect((await deliver(tampered, headers)).status).toBe(401)
    expect(() => webhook.verify(tampered, headers)).toThrow("No matching signature found")
  })

  it("signs Standard Webhooks exactly as the standardwebhooks library does", async () => {
    const timestamp = 1_750_000_000
    const body = eventBody("evt_same")

    expect(await signStandard(secret, "evt_same", timestamp, body)).toBe(
      new Webhook(secret).sign("evt_same", new Date(timestamp * 1000), body)
    )
  })
})

import { request as httpRequest } from "node:http"
import { Context, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Templates } from "@leadline/core/templates/Templates"
import { ChannelHealth } from "@leadline/core/whatsapp/ChannelHealth"
import { Inbound } from "@leadline/core/whatsapp/Inbound"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"
import type * as Composition from "@leadline/server/Composition"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import { MAX_BATCH_ITEMS } from "@leadline/whatsapp-adapter/meta/MetaWebhook"
import { createChannel } from "../src/channels/ChannelsResource.ts"
import { nextWaId } from "../src/conversations/ConversationsResource.ts"
import { type AccountFixture, makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * Floods at `POST /webhooks/whatsapp` (docs/contract-messaging.md §6.1): each address has a budget
 * of refused requests (bad signature or token, body over the limit), past which it is answered 429
 * before anything of its request is read; what Meta sends, signed, never spends it. An oversized
 * body (413) and a signed body that is no WhatsApp webhook (400) reach no store. Clients are told
 * apart by the loopback address they connect from (127.0.0.x), as different hosts would be.
 */

/**
 * The receiver's three ports to the stores (`WebhookReceiver.ts`: the only way a webhook reaches the
 * database), wrapped to record each call: a request that records none has not touched the database.
 */
const watched = (app: Layer.Layer<Composition.Stores, unknown>, calls: Array<string>) =>
  Layer.effectContext(
    Effect.gen(function* () {
      const context = yield* Effect.context<Composition.Stores>()
      const inbound = Context.get(context, Inbound)
      const templates = Context.get(context, Templates)
      const health = Context.get(context, ChannelHealth)
      return context.pipe(
        Context.add(
          Inbound,
          Inbound.of({
            receive: (changes) =>
              Effect.andThen(
                Effect.sync(() => calls.push("Inbound.receive")),
                inbound.receive(changes)
              )
          })
        ),
        Context.add(
          Templates,
          Templates.of({
            ...templates,
            applyUpdates: (updates) =>
              Effect.andThen(
                Effect.sync(() => calls.push("Templates.applyUpdates")),
                templates.applyUpdates(updates)
              )
          })
        ),
        Context.add(
          ChannelHealth,
          ChannelHealth.of({
            apply: (updates) =>
              Effect.andThen(
                Effect.sync(() => calls.push("ChannelHealth.apply")),
                health.apply(updates)
              )
          })
        )
      )
    })
  ).pipe(Layer.provide(app))

interface Reply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: any
}

/**
 * One request to the webhook from the loopback address `from`, its body sent whole, or (`open`)
 * one chunk of a body that never ends: only a server that does not read it can answer.
 */
const send = (
  target: TestServer.Running,
  from: string,
  options: {
    readonly method?: "GET" | "POST"
    readonly path?: string
    readonly body?: Uint8Array
    readonly headers?: Record<string, string>
    readonly open?: boolean
  } = {}
) =>
  new Promise<Reply>((resolve, reject) => {
    const url = new URL(options.path ?? "/webhooks/whatsapp", target.baseUrl)
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? "POST",
        localAddress: from,
        headers: { "content-type": "application/json", ...options.headers }
      },
      (incoming) => {
        const chunks: Array<Buffer> = []
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
        incoming.on("end", () => {
          const text = Buffer.concat(chunks).toString()
          const json = (incoming.headers["content-type"] ?? "").startsWith("application/json")
          resolve({ status: incoming.statusCode!, headers: incoming.headers, body: json ? JSON.parse(text) : text })
          outgoing.destroy()
        })
      }
    )
    outgoing.on("error", reject)
    if (options.open === true) outgoing.write(options.body ?? "{")
    else outgoing.end(options.body)
  })

describe.each(TestDatabase.STORES)("the WhatsApp webhook under a flood, on $name", ({ database: options }) => {
  /** Refusals an address may make a minute, here. */
  const LIMIT = 5
  let database: TestDatabase.TestDatabase | undefined
  let server: TestServer.Running
  let account: AccountFixture
  let channel: { id: string; phone_number_id: string }
  const calls: Array<string> = []

  beforeAll(async () => {
    database = options === undefined ? undefined : await TestDatabase.make(options)
    server = await TestServer.start({
      app: watched(database === undefined ? MemoryApp.layer : SqlApp.layer(database.config), calls),
      webhookRateLimit: { limit: LIMIT, window: "1 minute" },
      messaging: { sender: false }
    })
    account = await makeAccount(server)
    channel = await createChannel(server, account.ownerKey)
  })
  afterAll(async () => {
    await server?.close()
    await database?.dispose()
  })

  const signed = (raw: Uint8Array) => ({ "x-hub-signature-256": MetaSignature.sign(server.whatsappAppSecret, raw) })

  /** A customer's message as Meta delivers it, to the test's channel. */
  const delivery = (text: string) =>
    MetaPayloads.inboundTextPayload({
      phoneNumberId: channel.phone_number_id,
      displayPhoneNumber: "16505551111",
      from: nextWaId(),
      name: null,
      text,
      externalId: `wamid.${crypto.randomUUID()}`,
      timestamp: new Date(server.clock.clock.currentTimeMillisUnsafe())
    })

  const deliver = (from: string, text: string) => {
    const raw = delivery(text)
    return send(server, from, { body: raw, headers: signed(raw) })
  }

  /** Every text stored on the test's channel. */
  const storedTexts = async () => {
    const threads = await call(server, "GET", `/api/v1/conversations?channel_id=${channel.id}&limit=100`, {
      auth: account.ownerKey
    })
    expect(threads.status, threads.text).toBe(200)
    const texts: Array<string> = []
    for (const thread of threads.body.conversations as Array<{ id: string }>) {
      const messages = await call(server, "GET", `/api/v1/conversations/${thread.id}/messages?limit=100`, {
        auth: account.ownerKey
      })
      texts.push(...messages.body.messages.map((message: { text: string }) => message.text))
    }
    return texts.sort()
  }

  const unsigned = (from: string) =>
    send(server, from, { body: delivery("forged"), headers: { "x-hub-signature-256": `sha256=${"0".repeat(64)}` } })

  it("counts only refusals against an address: its signed deliveries go through until its budget is spent, then it gets 429 before its body is read while others are stored", async () => {
    const flooder = "127.0.0.2"
    const statuses: Array<number> = []
    // Meta's deliveries from the flooding address, between its forgeries, spend nothing.
    for (let i = 0; i < LIMIT; i++) {
      statuses.push((await deliver(flooder, `before ${i}`)).status)
      statuses.push((await unsigned(flooder)).status)
    }
    expect(statuses).toEqual(Array.from({ length: LIMIT }, () => [200, 401]).flat())
    const before = calls.length

    const refused = await unsigned(flooder)
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({
      error: `Too many refused requests from this address: ${LIMIT} per 60 s`,
      code: "rate_limited"
    })
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
    expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60)
    // A body that never ends is answered all the same: nothing of it was read.
    const unread = await send(server, flooder, { open: true, headers: { "transfer-encoding": "chunked" } })
    expect(unread.status).toBe(429)
    // Meta's own delivery from that address waits too (Meta retries it), and is not stored.
    expect((await deliver(flooder, "while limited")).status).toBe(429)
    // So does the handshake.
    const handshake = await send(server, flooder, {
      method: "GET",
      path: `/webhooks/whatsapp?hub.mode=subscribe&hub.challenge=1&hub.verify_token=${server.whatsappVerifyToken}`
    })
    expect(handshake.status).toBe(429)
    expect(calls.slice(before)).toEqual([])

    // Another address is not held up by it.
    const other = await deliver("127.0.0.3", "from elsewhere")
    expect(other.status).toBe(200)
    expect(other.body).toEqual({})
    expect(calls.slice(before)).toContain("Inbound.receive")

    // A minute on, the budget is back.
    server.clock.advance("61 seconds")
    expect((await deliver(flooder, "a minute on")).status).toBe(200)

    const texts = await storedTexts()
    expect(texts).toEqual(
      expect.arrayContaining([
        "a minute on",
        "from elsewhere",
        ...Array.from({ length: LIMIT }, (_, i) => `before ${i}`)
      ])
    )
    expect(texts).not.toContain("while limited")
    expect(texts).not.toContain("forged")
  })

  it("spends the budget on wrong handshake tokens and bodies over the limit too", async () => {
    const from = "127.0.0.4"
    const wrongToken = () =>
      send(server, from, {
        method: "GET",
        path: "/webhooks/whatsapp?hub.mode=subscribe&hub.challenge=1&hub.verify_token=nope"
      })
    const statuses = [
      (await wrongToken()).status,
      (await wrongToken()).status,
      (await send(server, from, { body: new Uint8Array(3 * 1024 * 1024 + 1) })).status,
      (
        await send(server, from, {
          body: new Uint8Array(3 * 1024 * 1024 + 1),
          headers: { "transfer-encoding": "chunked" }
        })
      ).status,
      (await unsigned(from)).status,
      (await unsigned(from)).status
    ]
    expect(statuses).toEqual([403, 403, 413, 413, 401, 429])
  })

  it("refuses a body over 3 MiB with 413 and a signed body that is no WhatsApp webhook with 400, reaching no store", async () => {
    const from = "127.0.0.5"
    const before = { calls: calls.length, texts: await storedTexts() }
    const encode = (value: unknown) =>
      new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value))
    const tooMany = {
      object: "whatsapp_business_account",
      entry: [
        {
          id: "1",
          changes: [
            {
              field: "messages",
              value: {
                metadata: { phone_number_id: channel.phone_number_id },
                statuses: Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => ({
                  id: `wamid.${i}`,
                  status: "read",
                  timestamp: "1700000000"
                }))
              }
            }
          ]
        }
      ]
    }
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      ["not json", "not JSON"],
      [{ object: 42, entry: [] }, 'object is not "whatsapp_business_account"'],
      [{ object: "whatsapp_business_account" }, "entry is not an array"],
      [{ object: "whatsapp_business_account", entry: {} }, "entry is not an array"],
      [tooMany, `more than ${MAX_BATCH_ITEMS} entries, changes and items in one batch`]
    ]
    // More than the budget: a signed body refused is Meta's (or its secret's holder's), and spends nothing.
    for (let round = 0; round < 2; round++) {
      for (const [value, reason] of cases) {
        const raw = encode(value)
        const reply = await send(server, from, { body: raw, headers: signed(raw) })
        expect(reply.status, reason).toBe(400)
        expect(reply.body).toEqual({
          error: `The body is not a WhatsApp Business Account webhook: ${reason}`,
          code: "validation_error"
        })
      }
    }
    const huge = delivery("x".repeat(3 * 1024 * 1024))
    const tooLarge = await send(server, from, { body: huge, headers: signed(huge) })
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.body).toEqual({
      error: "The request body is over the limit of 3145728 bytes",
      code: "payload_too_large"
    })
    const streamed = await send(server, from, {
      body: huge,
      headers: { ...signed(huge), "transfer-encoding": "chunked" }
    })
    expect(streamed.status).toBe(413)
    expect(calls.slice(before.calls)).toEqual([])
    expect(await storedTexts()).toEqual(before.texts)

    // The same address's next delivery is stored: the ports above were reachable.
    expect((await deliver(from, "after the refusals")).status).toBe(200)
    expect(calls.slice(before.calls)).toContain("Inbound.receive")
    expect(await storedTexts()).toEqual([...before.texts, "after the refusals"].sort())
  })
})

describe("the webhook's sources behind a trusted proxy", () => {
  let direct: TestServer.Running
  let proxied: TestServer.Running
  beforeAll(async () => {
    const limit = { limit: 2, window: "1 minute" } as const
    direct = await TestServer.start({ webhookRateLimit: limit })
    proxied = await TestServer.start({ webhookRateLimit: limit, trustedProxies: ["127.0.0.1/32"] })
  })
  afterAll(async () => {
    await direct?.close()
    await proxied?.close()
  })

  const forged = (target: TestServer.Running, forwardedFor?: string) =>
    send(target, "127.0.0.1", {
      body: new TextEncoder().encode("{}"),
      headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }
    }).then((reply) => reply.status)

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    const statuses = [
      await forged(direct, "198.51.100.1"),
      await forged(direct, "198.51.100.2"),
      await forged(direct, "198.51.100.3")
    ]
    expect(statuses).toEqual([401, 401, 429])
  })

  it("counts by the address the trusted proxy forwards, which an earlier entry cannot change", async () => {
    const statuses = [
      await forged(proxied, "198.51.100.7"),
      await forged(proxied, "198.51.100.7"),
      await forged(proxied, "198.51.100.7"),
      // A client's own X-Forwarded-For is left of what the proxy appended: still 198.51.100.7.
      await forged(proxied, "203.0.113.9, 198.51.100.7"),
      await forged(proxied, "198.51.100.8"),
      // The proxy's own requests are its own source.
      await forged(proxied)
    ]
    expect(statuses).toEqual([401, 401, 429, 429, 401, 401])
  })
})

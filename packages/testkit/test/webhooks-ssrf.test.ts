import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, nextPhone } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as MockReceiver from "../src/MockReceiver.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * The SSRF rules with the development switch off, as in production. No DNS
 * server is reachable here, so the worker resolves names from a fixed table;
 * the check on what it resolves, and the connection to exactly that, are real.
 */

let server: TestServer.Running
let receiver: MockReceiver.MockReceiver
let account: AccountFixture

beforeAll(async () => {
  receiver = await MockReceiver.start()
  server = await TestServer.start({
    webhooks: {
      allowPrivateUrls: false,
      workerOptions: { pollInterval: "100 millis" },
      resolver: {
        lookup: async (host) => {
          if (host === "hooks.example.com") return [{ address: "127.0.0.1", family: 4 }]
          if (host === "mixed.example.com") {
            return [
              { address: "93.184.215.14", family: 4 },
              { address: "10.1.2.3", family: 4 }
            ]
          }
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" })
        }
      }
    }
  })
  account = await makeAccount(server)
})
afterAll(async () => {
  await server?.close()
  await receiver?.close()
})

const register = (url: string) =>
  call(server, "POST", "/api/webhooks/endpoints", { auth: account.ownerKey, json: { url, events: ["lead.created"] } })

describe("webhook URLs at registration", () => {
  it.each([
    ["http://hooks.example.com/x", "url must use https"],
    ["https://127.0.0.1/x", "url must not point at a private or internal address"],
    ["https://10.0.0.1/x", "url must not point at a private or internal address"],
    ["https://169.254.169.254/latest/meta-data", "url must not point at a private or internal address"],
    ["https://[::1]/x", "url must not point at a private or internal address"],
    ["https://[::ffff:127.0.0.1]/x", "url must not point at a private or internal address"],
    ["https://2130706433/x", "url must not point at a private or internal address"],
    ["https://0x7f.1/x", "url must not point at a private or internal address"],
    ["https://localhost/x", "url must not point at a private or internal address"],
    ["https://api.localhost/x", "url must not point at a private or internal address"],
    // A trailing dot is the same name, fully qualified.
    ["https://localhost./x", "url must not point at a private or internal address"],
    ["https://metadata.google.internal./x", "url must not point at a private or internal address"],
    ["https://foo.local./x", "url must not point at a private or internal address"],
    ["https://printer.local../x", "url must not point at a private or internal address"],
    ["https://metadata./x", "url must not point at a private or internal address"],
    ["https://metadata/x", "url must not point at a private or internal address"],
    ["https://[fd00::1]/x", "url must not point at a private or internal address"],
    ["https://user:secret@hooks.example.com/x", "url must not contain credentials"],
    ["not a url", "url must be an absolute URL"],
    [`https://hooks.example.com/${"x".repeat(2050)}`, "url must be at most 2048 characters"]
  ])("refuses %s", async (url, message) => {
    const reply = await register(url)
    expect(reply.status).toBe(400)
    expect(reply.body).toEqual({ error: message, code: "validation_error", details: [{ path: "url", message }] })
  })

  it("accepts public https URLs, names and addresses alike", async () => {
    for (const url of [
      "https://hooks.example.com/leadline",
      "https://hooks.example.com./leadline",
      "https://93.184.215.14/x",
      "https://[2606:4700::1111]/x"
    ]) {
      expect((await register(url)).status, url).toBe(201)
    }
  })
})

describe("webhook connections", () => {
  it("refuses at connect time a name that resolves to a private address, and sends nothing", async () => {
    const endpoint = receiver.endpoint("/never")
    const evil = await register(`https://hooks.example.com${endpoint.path}`)
    const mixed = await register("https://mixed.example.com/x")
    expect([evil.status, mixed.status]).toEqual([201, 201])
    await call(server, "POST", "/api/v1/leads", { auth: account.ownerKey, json: { name: "Bait", phone: nextPhone() } })

    const attemptsOf = async (endpointId: string) => {
      for (let i = 0; i < 50; i++) {
        const log = await call(server, "GET", `/api/webhooks/deliveries?endpoint_id=${endpointId}`, {
          auth: account.ownerKey
        })
        const attempts = log.body.deliveries[0]?.attempts ?? []
        if (attempts.length > 0) return attempts
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      return []
    }
    const [first] = await attemptsOf(evil.body.id)
    expect(first).toMatchObject({
      status_code: null,
      error: "refused: hooks.example.com resolves to 127.0.0.1, a private or internal address"
    })
    const [second] = await attemptsOf(mixed.body.id)
    expect(second.error).toBe("refused: mixed.example.com resolves to 10.1.2.3, a private or internal address")
    expect(receiver.all()).toHaveLength(0)
  })
})

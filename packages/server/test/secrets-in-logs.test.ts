import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAccount, nextPhone } from "@leadline/testkit/Fixtures"
import { call, type Reply } from "@leadline/testkit/Http"
import * as MockReceiver from "@leadline/testkit/MockReceiver"
import * as ServerProcess from "./support/ServerProcess.ts"

/**
 * OWASP API8 (security misconfiguration), for the log: the real server process
 * at debug level, driven through key issuing, failures of every kind (logged
 * errors included) and failing webhook deliveries, must never write an API
 * key, a webhook secret or the operator token. Its whole output (stdout and
 * stderr, up to and including shutdown) is searched for every such value the
 * test saw, and for anything shaped like one.
 */

let dataDir: string
let server: ServerProcess.ServerProcess
let receiver: MockReceiver.MockReceiver
let log = ""
const apiKeys = new Set<string>()
const webhookSecrets = new Set<string>()
const accessToken = `EAAG${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex")}`
// The token is sealed under this key: neither the key nor the sealed value may reach the log.
const encryptionKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")

/** The log's lines that contain `needle`: an empty list reads better than a 200-line haystack when it fails. */
const linesWith = (needle: string | RegExp) =>
  log.split("\n").filter((line) => (typeof needle === "string" ? line.includes(needle) : needle.test(line)))

const expectError = (reply: Reply, status?: number) => {
  if (status !== undefined) expect(reply.status, reply.text).toBe(status)
  expect(reply.status, reply.text).toBeGreaterThanOrEqual(400)
  // Whatever went wrong, the caller sees only a message and a code.
  expect(Object.keys(reply.body).filter((key) => !["error", "code", "details"].includes(key))).toEqual([])
  expect(reply.text).not.toMatch(/at \w+ \(|\.ts:|\.js:|SELECT |INSERT |_tag/)
}

beforeAll(async () => {
  dataDir = ServerProcess.tempDataDir()
  receiver = await MockReceiver.start()
  server = await ServerProcess.start({
    dataDir,
    env: {
      LOG_LEVEL: "debug",
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      WEBHOOK_POLL_INTERVAL_MS: "200",
      LEADLINE_ENCRYPTION_KEY: `k1:${encryptionKey}`
    }
  })

  // Keys: the owner's from account creation, and issued ones of every kind.
  const account = await makeAccount(server, { keys: { full: [], reader: ["leads:read"], doomed: ["leads:write"] } })
  const other = await makeAccount(server)
  const unknown = `lk_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")}`
  const reader = account.keys.reader!.apiKey
  const doomed = account.keys.doomed!
  for (const key of [account.ownerKey, other.ownerKey, reader, doomed.apiKey, account.keys.full!.apiKey, unknown]) {
    apiKeys.add(key)
  }
  expect(apiKeys.size).toBe(6)

  // Webhooks: one receiver answers 500, one drops the connection; both retry in the log window.
  const failing = receiver.endpoint("/fails")
  const dropping = receiver.endpoint("/drops")
  failing.respond(...Array.from({ length: 10 }, () => ({ status: 500 })))
  dropping.respond(...Array.from({ length: 10 }, () => ({ close: true as const })))
  for (const endpoint of [failing, dropping]) {
    const registered = await call(server, "POST", "/api/webhooks/endpoints", {
      auth: account.ownerKey,
      json: { url: endpoint.url, events: ["lead.created", "lead.deleted"], description: "secrets-in-logs" }
    })
    expect(registered.status, registered.text).toBe(201)
    expect(registered.body.secret).toMatch(/^whsec_/)
    webhookSecrets.add(registered.body.secret)
    endpoint.setSecret(registered.body.secret)
  }

  // Successes with each key.
  const lead = await call(server, "POST", "/api/v1/leads", {
    auth: account.keys.full!.apiKey,
    json: { name: "Logged", phone: nextPhone() }
  })
  expect(lead.status).toBe(201)
  expect((await call(server, "GET", "/api/v1/leads", { auth: reader })).status).toBe(200)
  expect((await call(server, "GET", "/api/me", { auth: other.ownerKey })).status).toBe(200)

  // Failures with those keys: each class of error the API answers.
  const owner = account.ownerKey
  const json = { "content-type": "application/json" }
  expectError(
    await call(server, "POST", "/api/v1/leads", { auth: reader, json: { name: "x", phone: nextPhone() } }),
    403
  )
  expectError(await call(server, "GET", `/api/v1/leads/${lead.body.id}`, { auth: other.ownerKey }), 404)
  expectError(await call(server, "GET", "/api/me", { auth: unknown }), 401)
  expectError(await call(server, "GET", "/api/me", { headers: { authorization: `Basic ${btoa(`${owner}:`)}` } }), 401)
  expectError(await call(server, "GET", `/api/me?api_key=${owner}`), 401)
  expectError(await call(server, "GET", "/api/me", { auth: server.adminToken }), 401)
  expectError(await call(server, "GET", `/admin/v1/accounts/${account.accountId}/keys`, { auth: owner }), 401)
  expectError(await call(server, "POST", "/api/v1/leads", { auth: owner, raw: '{"name": ', headers: json }), 400)
  expectError(
    await call(server, "POST", "/api/v1/leads", { auth: owner, json: { name: "Bad Phone", phone: "nope" } }),
    400
  )
  expectError(await call(server, "POST", "/api/v1/leads", { auth: owner, raw: "{}", headers: {} }), 415)
  expectError(
    await call(server, "POST", "/api/v1/leads", { auth: owner, raw: "x".repeat(1024 * 1024 + 1), headers: json }),
    413
  )
  expectError(await call(server, "GET", "/api/v1/nothing-here", { auth: owner }), 404)
  const deleted = await call(server, "DELETE", `/api/v1/leads/${lead.body.id}`, { auth: doomed.apiKey })
  expect(deleted.status).toBe(200)
  const revoked = await call(server, "DELETE", `/admin/v1/keys/${doomed.id}`, { auth: server.adminToken })
  expect(revoked.status).toBe(200)
  expectError(await call(server, "GET", "/api/v1/leads", { auth: doomed.apiKey }), 401)

  // Requests the server fails on and logs as errors with their cause, each made with a key or
  // the admin token in its Authorization header (at the time of writing these are 500s on the
  // embedded database: NUL bytes reach PostgreSQL; the deep array overflows the attributes check).
  let deep = "1"
  for (let i = 0; i < 5000; i++) deep = `[${deep}]`
  expectError(
    await call(server, "POST", "/api/v1/leads", { auth: owner, json: { name: "a\u0000b", phone: nextPhone() } })
  )
  expectError(
    await call(server, "POST", "/api/v1/leads", {
      auth: owner,
      raw: `{"name":"Deep","phone":"${nextPhone()}","attributes":{"a":${deep}}}`,
      headers: json
    })
  )
  expectError(await call(server, "GET", "/api/v1/leads/ld_%00", { auth: reader }))
  expectError(await call(server, "POST", "/api/webhooks/deliveries/redeliver?id=%00", { auth: owner }))
  expectError(await call(server, "DELETE", "/admin/v1/keys/%00", { auth: server.adminToken }))

  // WhatsApp: a channel with its access token, a customer played in (signed with the app
  // secret), a reply through the sender, a forged signature and a wrong verify token.
  const channel = await call(server, "POST", "/api/v1/channels", {
    auth: owner,
    json: {
      type: "whatsapp",
      name: "Logged line",
      phone_number_id: "777000111",
      display_phone_number: "+16505551111",
      access_token: accessToken
    }
  })
  expect(channel.status, channel.text).toBe(201)
  const played = await call(server, "POST", "/admin/v1/simulator/whatsapp/inbound", {
    auth: server.adminToken,
    json: { phone_number_id: "777000111", from: "14155550123", text: "Hello" }
  })
  expect(played.status, played.text).toBe(202)
  const [conversation] = (await call(server, "GET", "/api/v1/conversations", { auth: owner })).body.conversations
  const reply = await call(server, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
    auth: owner,
    json: { type: "text", text: "Hi back" }
  })
  expect(reply.status, reply.text).toBe(201)
  expectError(
    await call(server, "POST", "/webhooks/whatsapp", {
      raw: '{"object":"whatsapp_business_account","entry":[]}',
      headers: { ...json, "x-hub-signature-256": `sha256=${"0".repeat(64)}` }
    }),
    401
  )
  expectError(
    await call(server, "GET", "/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1"),
    403
  )
  // Let the failing deliveries (lead.created and lead.deleted, and lead.created of the customer
  // who wrote in on WhatsApp, to each receiver) run a few rounds of retries, then ask for one again.
  await failing.waitFor(4, 15_000)
  await dropping.waitFor(4, 15_000)
  const deliveries = await call(server, "GET", "/api/webhooks/deliveries", { auth: owner })
  expect(deliveries.status).toBe(200)
  expect(deliveries.body.deliveries).toHaveLength(6)
  for (const delivery of deliveries.body.deliveries) {
    expect(delivery.attempts.every((attempt: { status_code: number | null }) => attempt.status_code !== 200)).toBe(true)
  }
  const redelivered = await call(
    server,
    "POST",
    `/api/webhooks/deliveries/redeliver?id=${deliveries.body.deliveries[0].id}`,
    {
      auth: owner
    }
  )
  expect(redelivered.status, redelivered.text).toBe(200)

  // Stop it, so shutdown is in the log too.
  expect(await server.stop()).toBe(0)
  log = server.log()
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await receiver?.close()
  if (dataDir !== undefined) ServerProcess.removeDir(dataDir)
})

describe("the server log at debug level", () => {
  it("is the whole log: startup, debug lines and where the operator token is", () => {
    expect(linesWith("Listening on http://127.0.0.1:")).toHaveLength(1)
    expect(linesWith(/DEBUG .*webhook worker .* started/)).toHaveLength(1)
    // It says where the operator token is, which is fine: the path is not the token.
    expect(linesWith(`No LEADLINE_ADMIN_TOKEN set: made one and saved it in ${dataDir}/admin-token`)).toHaveLength(1)
  })

  it("holds no API key, whole or without its prefix", () => {
    for (const key of apiKeys) {
      expect(linesWith(key)).toEqual([])
      expect(linesWith(key.slice("lk_".length))).toEqual([])
    }
    expect(linesWith(/lk_[A-Za-z0-9_-]{20,}/)).toEqual([])
  })

  it("holds no webhook secret, whole or its base64 part", () => {
    expect(webhookSecrets.size).toBe(2)
    for (const secret of webhookSecrets) {
      expect(linesWith(secret)).toEqual([])
      expect(linesWith(secret.slice("whsec_".length))).toEqual([])
    }
    expect(linesWith("whsec_")).toEqual([])
  })

  it("holds no channel access token, nor the Meta app's secret or verify token", () => {
    expect(linesWith(accessToken)).toEqual([])
    for (const file of ["whatsapp-app-secret", "whatsapp-verify-token"]) {
      const secret = readFileSync(join(dataDir, file), "utf8").trim()
      expect(secret.length).toBeGreaterThan(20)
      expect(linesWith(secret)).toEqual([])
    }
  })

  it("holds no encryption key, and no sealed value", () => {
    expect(linesWith("Secrets: sealed with the key k1 (keyring: k1)")).toHaveLength(1)
    expect(linesWith(encryptionKey)).toEqual([])
    expect(linesWith(encryptionKey.slice(0, 16))).toEqual([])
    expect(linesWith(/v1\.k1\./)).toEqual([])
  })

  it("holds no operator token", () => {
    expect(server.adminToken).toMatch(/^lla_[A-Za-z0-9_-]{43}$/)
    expect(linesWith(server.adminToken)).toEqual([])
    expect(linesWith(server.adminToken.slice("lla_".length))).toEqual([])
    expect(linesWith(/lla_[A-Za-z0-9_-]{20,}/)).toEqual([])
  })
})

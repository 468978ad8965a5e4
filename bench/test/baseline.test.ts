import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Seed from "../baseline/Seed.ts"
import * as Server from "../baseline/Server.ts"
import * as Postgres from "../src/Postgres.ts"

/**
 * The baseline answers the contract on the three benchmarked routes, byte for byte where the
 * contract fixes the body. It runs on a fresh database of its own on the PostgreSQL server of
 * BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
 */

// Every permission of docs/contract.md, sorted: what a key with no scopes has.
const ALL_PERMISSIONS = [
  "agents.create",
  "agents.update",
  "agents.view",
  "ai.use",
  "analytics.view",
  "campaigns.create",
  "campaigns.send",
  "campaigns.view",
  "catalogue.manage",
  "catalogue.view",
  "conversations.view",
  "knowledge.delete",
  "knowledge.upload",
  "knowledge.view",
  "leads.assign",
  "leads.create",
  "leads.delete",
  "leads.update",
  "leads.view",
  "messages.send",
  "messages.view",
  "orders.create",
  "orders.update",
  "orders.view",
  "webhooks.manage"
]

const UNAUTHORIZED = `{"error":"Invalid or missing API key","code":"unauthorized"}`
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let database: Awaited<ReturnType<typeof Postgres.freshDatabase>>
let server: Server.Started
let account: Seed.Account
let readKey: string
let analyticsKey: string

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly body: any
}

const call = async (
  method: "GET" | "POST",
  path: string,
  options: { key?: string; body?: string; headers?: Record<string, string> } = {}
): Promise<Answer> => {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers
    },
    ...(options.body === undefined ? {} : { body: options.body })
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) }
}

const create = (body: unknown, headers: Record<string, string> = {}, key = account.apiKey) =>
  call("POST", "/api/v1/leads", { key, body: JSON.stringify(body), headers })

beforeAll(async () => {
  database = await Postgres.freshDatabase("baseline_test")
  server = await Server.start({ databaseUrl: database.url, port: 0, host: "127.0.0.1" })
  account = await Seed.createAccount(server.pool, "Test")
  readKey = await Seed.createApiKey(server.pool, account, ["leads:read"])
  analyticsKey = await Seed.createApiKey(server.pool, account, ["analytics:read"])
})

afterAll(async () => {
  await server?.close()
  await database?.drop()
})

describe("the baseline server", () => {
  it("GET /api/me: the key's identity, scopes and sorted permissions", async () => {
    const full = await call("GET", "/api/me", { key: account.apiKey })
    expect(full.status).toBe(200)
    expect(full.headers.get("x-request-id")).toMatch(/^req_[0-9a-z]{26}$/)
    expect(full.text).toBe(
      JSON.stringify({
        account: {
          user_id: account.ownerUserId,
          owner_user_id: account.ownerUserId,
          role: "owner",
          is_owner: true,
          auth_type: "api_key"
        },
        scopes: [],
        permissions: ALL_PERMISSIONS
      })
    )
    const read = await call("GET", "/api/me", { key: readKey })
    expect(read.body).toEqual({ ...full.body, scopes: ["leads:read"], permissions: ["leads.view"] })
  })

  it("401 for a missing, malformed or unknown key", async () => {
    for (const headers of [
      {},
      { authorization: "Basic abc" },
      { authorization: `Bearer lk_${"x".repeat(43)}` },
      { authorization: `Bearer ${account.apiKey}x` }
    ]) {
      const answer = await call("GET", "/api/me", { headers })
      expect(answer.status).toBe(401)
      expect(answer.text).toBe(UNAUTHORIZED)
      expect(answer.headers.get("www-authenticate")).toBe("Bearer")
    }
    const post = await call("POST", "/api/v1/leads", { body: "{}" })
    expect([post.status, post.text]).toEqual([401, UNAUTHORIZED])
  })

  it("403 naming the narrowest scope the route needs", async () => {
    const write = await create({ name: "Nope", phone: "+14155550999" }, {}, readKey)
    expect([write.status, write.text]).toEqual([
      403,
      `{"error":"Insufficient scope: requires leads:write","code":"forbidden"}`
    ])
    const list = await call("GET", "/api/v1/leads", { key: analyticsKey })
    expect([list.status, list.text]).toEqual([
      403,
      `{"error":"Insufficient scope: requires leads:read","code":"forbidden"}`
    ])
  })

  it("POST /api/v1/leads: 201 with the lead, phone in E.164, defaults filled in; an event and its deliveries", async () => {
    const subscribed = await Seed.addWebhookEndpoint(server.pool, account.accountId, "https://example.com/a")
    await Seed.addWebhookEndpoint(server.pool, account.accountId, "https://example.com/b", ["lead.deleted"])
    const answer = await create({ name: "Ada Lovelace", phone: "+1 415-555 0100" })
    expect(answer.status).toBe(201)
    expect(Object.keys(answer.body)).toEqual([
      "id",
      "name",
      "phone",
      "email",
      "tags",
      "status",
      "assigned_user_id",
      "attributes",
      "created_at",
      "updated_at"
    ])
    expect(answer.body).toEqual({
      id: expect.stringMatching(/^ld_[0-9a-z]{26}$/),
      name: "Ada Lovelace",
      phone: "+14155550100",
      email: null,
      tags: [],
      status: "new",
      assigned_user_id: null,
      attributes: {},
      created_at: expect.stringMatching(ISO),
      updated_at: answer.body.created_at
    })
    expect(answer.headers.get("idempotent-replayed")).toBeNull()

    const full = await create({
      name: "Grace",
      phone: "+442079460958",
      email: "grace@example.com",
      tags: ["vip"],
      status: "qualified",
      assigned_user_id: account.ownerUserId,
      attributes: { source: "test" }
    })
    expect(full.status).toBe(201)
    expect(full.body).toMatchObject({
      phone: "+442079460958",
      email: "grace@example.com",
      tags: ["vip"],
      status: "qualified",
      assigned_user_id: account.ownerUserId,
      attributes: { source: "test" }
    })

    const events = await server.pool.query(
      `SELECT e.id, e.type, e.payload, array_agg(d.endpoint_id) FILTER (WHERE d.id IS NOT NULL) AS endpoints
         FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
        WHERE e.payload->'data'->>'id' = $1 GROUP BY e.id`,
      [answer.body.id]
    )
    expect(events.rows).toHaveLength(1)
    expect(events.rows[0].id).toMatch(/^evt_[0-9a-z]{26}$/)
    expect(events.rows[0].payload).toEqual({
      id: events.rows[0].id,
      type: "lead.created",
      created_at: answer.body.created_at,
      account_id: account.accountId,
      data: answer.body
    })
    expect(events.rows[0].endpoints).toEqual([subscribed])
  })

  it("Idempotency-Key: the same request replays the stored answer, another body is 422", async () => {
    const body = { name: "Replay", phone: "+14155550101" }
    const first = await create(body, { "idempotency-key": "replay-1" })
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const again = await create(body, { "idempotency-key": "replay-1" })
    expect(again.status).toBe(201)
    expect(again.text).toBe(first.text)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    const leads = await server.pool.query("SELECT count(*)::int AS n FROM leads WHERE phone = $1", [body.phone])
    expect(leads.rows[0].n).toBe(1)

    const other = await create({ ...body, name: "Other" }, { "idempotency-key": "replay-1" })
    expect([other.status, other.text]).toEqual([
      422,
      `{"error":"This Idempotency-Key was already used with a different method, path or body","code":"idempotency_key_reused"}`
    ])
    const tooLong = await create(body, { "idempotency-key": "k".repeat(201) })
    expect(tooLong.status).toBe(400)
    expect(tooLong.body.code).toBe("validation_error")
  })

  it("409 for a second lead with the same phone in the account (replayed under its key too)", async () => {
    await create({ name: "First", phone: "+14155550102" })
    const conflict = await create({ name: "Second", phone: "+1 (415) 555-0102" }, { "idempotency-key": "dup" })
    const expected = `{"error":"A lead with phone +14155550102 already exists","code":"conflict"}`
    expect([conflict.status, conflict.text]).toEqual([409, expected])
    const replay = await create({ name: "Second", phone: "+1 (415) 555-0102" }, { "idempotency-key": "dup" })
    expect([replay.status, replay.text, replay.headers.get("idempotent-replayed")]).toEqual([409, expected, "true"])
  })

  it("400 with details for an invalid body", async () => {
    const answer = await create({ name: "", phone: "555", status: "maybe", extra: 1 })
    expect(answer.status).toBe(400)
    expect(answer.body).toEqual({
      error: "Invalid request body: name: name must not be empty",
      code: "validation_error",
      details: [
        { path: "name", message: "name must not be empty" },
        { path: "phone", message: "phone must be an international number with a leading +, e.g. +14155550100" },
        { path: "status", message: "status must be one of new, contacted, qualified, won, lost" },
        { path: "extra", message: "unknown field" }
      ]
    })
    const notJson = await call("POST", "/api/v1/leads", { key: account.apiKey, body: "{nope" })
    expect(notJson.status).toBe(400)
    expect(notJson.body.code).toBe("validation_error")
  })

  it("GET /api/v1/leads: newest first, with meta; count(*) for the total", async () => {
    const other = await Seed.createAccount(server.pool, "Listed")
    // Seeds of two accounts side by side; each account lists only its own.
    await Seed.seedLeads(server.pool, account.accountId, 3)
    await Seed.seedLeads(server.pool, other.accountId, 3)
    const seedId = (i: number) => `ld_seed${other.accountId.slice(0, 8)}${String(i).padStart(11, "0")}`
    const page = await call("GET", "/api/v1/leads?limit=2", { key: other.apiKey })
    expect(page.status).toBe(200)
    expect(page.body.leads.map((lead: any) => lead.id)).toEqual([seedId(3), seedId(2)])
    expect(page.body.leads[0]).toEqual({
      id: seedId(3),
      name: "Seed 3",
      phone: "+12000000003",
      email: null,
      tags: ["seed"],
      status: "new",
      assigned_user_id: null,
      attributes: { source: "seed" },
      created_at: "2026-01-01T00:00:07.500Z",
      updated_at: "2026-01-01T00:00:07.500Z"
    })
    expect(page.text.endsWith(`"meta":{"limit":2,"offset":0,"total":3,"has_more":true,"next_offset":2}}`)).toBe(true)

    const last = await call("GET", "/api/v1/leads?limit=2&offset=2", { key: other.apiKey })
    expect(last.body.leads).toHaveLength(1)
    expect(last.body.meta).toEqual({ limit: 2, offset: 2, total: 3, has_more: false, next_offset: null })
    const past = await call("GET", "/api/v1/leads?offset=10", { key: other.apiKey })
    expect(past.text).toBe(`{"leads":[],"meta":{"limit":50,"offset":10,"total":3,"has_more":false,"next_offset":null}}`)

    // A lead created through the API comes first, for a read-only key too.
    const created = await create({ name: "Newest", phone: "+14155550103" }, {}, other.apiKey)
    const read = await Seed.createApiKey(server.pool, other, ["leads:read"])
    const first = await call("GET", "/api/v1/leads?limit=1", { key: read })
    expect(first.body.leads).toEqual([created.body])
    expect(first.body.meta).toEqual({ limit: 1, offset: 0, total: 4, has_more: true, next_offset: 1 })

    for (const query of ["limit=0", "limit=101", "limit=abc", "offset=-1"]) {
      const refused = await call("GET", `/api/v1/leads?${query}`, { key: other.apiKey })
      expect(refused.status).toBe(400)
      expect(refused.body.code).toBe("validation_error")
    }
  })

  it("404 in the contract's shape for an unknown route", async () => {
    const answer = await call("GET", "/api/v1/nope", { key: account.apiKey })
    expect([answer.status, answer.text]).toEqual([404, `{"error":"No such route","code":"not_found"}`])
  })
})

/**
 * The hand-written baseline for `npm run bench`: fastify 5 + pg, no Effect, written from
 * the wire contract (docs/contract.md) with its own schema (Schema.ts). See README.md.
 *
 *   DATABASE_URL=postgres://… PORT=3001 node bench/baseline/Server.ts   # "Listening on http://…"
 */
import { createHash, randomBytes } from "node:crypto"
import type { AddressInfo } from "node:net"
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify"
import pg from "pg"
import { type Problem, toE164, validateCreate } from "./LeadValidation.ts"
import { migrate } from "./Schema.ts"

export { toE164, validateCreate }

// ---------------------------------------------------------------------------------------------
// Scopes and permissions (the table in docs/contract.md). For a permission several scopes
// grant, the first listed is the narrowest and is the one a 403 names.

const GRANTS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["leads:read", ["leads.view"]],
  ["leads:write", ["leads.view", "leads.create", "leads.update", "leads.assign", "leads.delete"]],
  ["conversations:read", ["conversations.view", "messages.view"]],
  ["messages:send", ["conversations.view", "messages.view", "messages.send"]],
  ["campaigns:read", ["campaigns.view"]],
  ["campaigns:write", ["campaigns.view", "campaigns.create"]],
  ["campaigns:send", ["campaigns.view", "campaigns.send"]],
  ["orders:read", ["orders.view"]],
  ["orders:write", ["orders.view", "orders.create", "orders.update"]],
  ["catalogue:read", ["catalogue.view"]],
  ["knowledge:read", ["knowledge.view"]],
  ["knowledge:write", ["knowledge.view", "knowledge.upload", "knowledge.delete"]],
  ["agents:read", ["agents.view"]],
  ["agents:write", ["agents.view", "agents.create", "agents.update"]],
  ["analytics:read", ["analytics.view"]],
  ["ai:use", ["ai.use"]]
]
const SCOPE_PERMISSIONS = new Map(GRANTS)
export const SCOPES: ReadonlyArray<string> = GRANTS.map(([scope]) => scope)
const ALL_PERMISSIONS = [
  ...new Set([...GRANTS.flatMap(([, permissions]) => permissions), "webhooks.manage", "catalogue.manage"])
].sort()

export const permissionsOf = (scopes: ReadonlyArray<string>): Array<string> =>
  scopes.length === 0
    ? ALL_PERMISSIONS
    : [...new Set(scopes.flatMap((scope) => SCOPE_PERMISSIONS.get(scope) ?? []))].sort()

const allows = (scopes: ReadonlyArray<string>, permission: string) =>
  scopes.length === 0 || scopes.some((scope) => SCOPE_PERMISSIONS.get(scope)?.includes(permission) === true)

const requiredScope = (permission: string) =>
  GRANTS.find(([, permissions]) => permissions.includes(permission))?.[0] ?? "full access"

// ---------------------------------------------------------------------------------------------
// Ids: a prefix, then 10 characters of milliseconds and 16 random ones (Crockford base32,
// lower case), so they sort by time.

const BASE32 = "0123456789abcdefghjkmnpqrstvwxyz"

export const newId = (prefix: string): string => {
  let time = Date.now()
  let head = ""
  for (let i = 0; i < 10; i++) {
    head = BASE32[time % 32] + head
    time = Math.floor(time / 32)
  }
  const random = randomBytes(16)
  let tail = ""
  for (let i = 0; i < 16; i++) tail += BASE32[random[i]! & 31]
  return prefix + head + tail
}

export const sha256 = (text: string): Buffer => createHash("sha256").update(text).digest()

// ---------------------------------------------------------------------------------------------
// Wire helpers. Every error is {"error", "code"} (plus "details" on validation errors).

const sendJson = (reply: FastifyReply, status: number, body: string) =>
  reply.code(status).header("content-type", "application/json").send(body)

const sendError = (reply: FastifyReply, status: number, code: string, message: string) =>
  sendJson(reply, status, JSON.stringify({ error: message, code }))

const validationBody = (where: string, problems: ReadonlyArray<Problem>) => {
  const first = problems[0]!
  return JSON.stringify({
    error: `Invalid request ${where}: ${first.path === "" ? "" : `${first.path}: `}${first.message}`,
    code: "validation_error",
    details: problems
  })
}

// ---------------------------------------------------------------------------------------------
// Authentication: `Authorization: Bearer lk_…`, SHA-256 of the key, one indexed lookup per
// request (no cache: a revoked key or a scope change counts from the next request).

export interface Principal {
  readonly accountId: string
  readonly userId: string
  readonly ownerUserId: string
  readonly role: string
  readonly scopes: ReadonlyArray<string>
}

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null
    rawBody: string | null
  }
}

const KEY_SHAPE = /^lk_[A-Za-z0-9_-]{16,200}$/

const AUTH = {
  name: "baseline_auth",
  text: `SELECT k.account_id, k.user_id, k.scopes, u.role, a.owner_user_id
           FROM api_keys k
           JOIN users u ON u.id = k.user_id
           JOIN accounts a ON a.id = k.account_id
          WHERE k.key_hash = $1 AND k.revoked_at IS NULL`
}

interface LeadRow {
  readonly id: string
  readonly name: string
  readonly phone: string
  readonly email: string | null
  readonly tags: Array<string>
  readonly status: string
  readonly assigned_user_id: string | null
  readonly attributes: Record<string, unknown>
  readonly created_at: Date
  readonly updated_at: Date
}

const leadOfRow = (row: LeadRow) => ({
  id: row.id,
  name: row.name,
  phone: row.phone,
  email: row.email,
  tags: row.tags,
  status: row.status,
  assigned_user_id: row.assigned_user_id,
  attributes: row.attributes,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

const LIST_PAGE = {
  name: "baseline_leads_page",
  text: `SELECT id, name, phone, email, tags, status, assigned_user_id, attributes, created_at, updated_at
           FROM leads
          WHERE account_id = $1
          ORDER BY created_at DESC, id DESC
          LIMIT $2 OFFSET $3`
}
const LIST_TOTAL = { name: "baseline_leads_total", text: "SELECT count(*) AS total FROM leads WHERE account_id = $1" }
const USER_IN_ACCOUNT = {
  name: "baseline_user_in_account",
  text: "SELECT 1 FROM users WHERE account_id = $1 AND id = $2"
}
const INSERT_LEAD = {
  name: "baseline_insert_lead",
  text: `INSERT INTO leads (id, account_id, name, phone, email, tags, status, assigned_user_id, attributes, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
         ON CONFLICT (account_id, phone) DO NOTHING`
}
// The event, one pending delivery per enabled endpoint of the account subscribed to its type,
// and (only when there is a delivery) a NOTIFY for the worker, delivered at COMMIT.
const INSERT_EVENT = {
  name: "baseline_insert_event",
  text: `WITH event AS (
           INSERT INTO events (id, account_id, type, payload, created_at) VALUES ($1, $2, $3, $4, $5)
           RETURNING id, account_id, type
         ), fanout AS (
           INSERT INTO webhook_deliveries (event_id, endpoint_id)
           SELECT event.id, endpoint.id
             FROM event
             JOIN webhook_endpoints endpoint ON endpoint.account_id = event.account_id
            WHERE endpoint.enabled AND event.type = ANY (endpoint.events)
           RETURNING event_id
         )
         SELECT pg_notify('webhook_deliveries', event_id) FROM fanout LIMIT 1`
}

// ---------------------------------------------------------------------------------------------
// Idempotency: the record is reserved, the operation runs and the response is stored in one
// transaction. A twin still running holds the advisory lock of the key, so the reservation
// neither waits for it nor sees its row: 409 idempotency_in_progress. A record older than
// 24 hours is taken over as if it were not there.

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,200}$/
const RESERVE = {
  name: "baseline_idempotency_reserve",
  text: `INSERT INTO idempotency_keys AS existing (account_id, key, fingerprint)
         SELECT $1::uuid, $2::text, $3::bytea
          WHERE pg_try_advisory_xact_lock(hashtextextended($1::uuid::text || '/' || $2::text, 0))
         ON CONFLICT (account_id, key) DO UPDATE
            SET fingerprint = EXCLUDED.fingerprint, status_code = NULL, response_body = NULL, created_at = now()
          WHERE existing.created_at <= now() - interval '24 hours'
         RETURNING 1`
}
const FIND = {
  name: "baseline_idempotency_find",
  text: `SELECT fingerprint, status_code, response_body FROM idempotency_keys
          WHERE account_id = $1 AND key = $2 AND created_at > now() - interval '24 hours'`
}
const STORE = {
  name: "baseline_idempotency_store",
  text: "UPDATE idempotency_keys SET status_code = $3, response_body = $4 WHERE account_id = $1 AND key = $2"
}
const PURGE = "DELETE FROM idempotency_keys WHERE created_at <= now() - interval '24 hours'"

// ---------------------------------------------------------------------------------------------

const MAX_BODY_BYTES = 1024 * 1024
const OFFSET_MAX = 1_000_000_000

type Query = Record<string, string | Array<string> | undefined>

/** A whole number from the query string, or why not. */
const integerParam = (query: Query, name: string, min: number, max: number, fallback: number): number | Problem => {
  const raw = query[name]
  if (raw === undefined) return fallback
  const range = `${name} must be an integer from ${min} to ${max}`
  if (typeof raw !== "string" || !/^-?\d{1,12}$/.test(raw)) return { path: name, message: range }
  const value = Number(raw)
  return value >= min && value <= max ? value : { path: name, message: range }
}

export interface StartOptions {
  readonly databaseUrl: string
  readonly port?: number
  readonly host?: string
  readonly poolSize?: number
}

export interface Started {
  readonly url: string
  readonly pool: pg.Pool
  readonly close: () => Promise<void>
}

export const start = async (options: StartOptions): Promise<Started> => {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 })
  pool.on("error", (error) => console.error("baseline: idle database connection failed", error))
  await migrate(pool)
  const purge = setInterval(
    () => pool.query(PURGE).catch((error) => console.error("baseline: idempotency purge failed", error)),
    60 * 60 * 1000
  )
  purge.unref()

  const app = Fastify({ logger: false, bodyLimit: MAX_BODY_BYTES, genReqId: () => newId("req_") })
  app.decorateRequest("principal", null)
  app.decorateRequest("rawBody", null)

  // JSON only; the raw text is kept for the idempotency fingerprint.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = body as string
    request.rawBody = text
    if (text.length === 0) return done(null, undefined)
    try {
      done(null, JSON.parse(text))
    } catch {
      done(Object.assign(new Error("the body is not valid JSON"), { statusCode: 400, code: "BASELINE_BAD_JSON" }))
    }
  })

  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id)
    done()
  })

  app.setNotFoundHandler((_request, reply) => sendError(reply, 404, "not_found", "No such route"))

  app.setErrorHandler((error: Error & { code?: string; statusCode?: number }, request, reply) => {
    switch (error.code) {
      case "FST_ERR_CTP_BODY_TOO_LARGE":
        return sendError(
          reply,
          413,
          "payload_too_large",
          `The request body is over the limit of ${MAX_BODY_BYTES} bytes`
        )
      case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
        return sendError(reply, 415, "unsupported_media_type", "The request body must be application/json")
      case "BASELINE_BAD_JSON":
        return sendJson(reply, 400, validationBody("body", [{ path: "", message: error.message }]))
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return sendJson(reply, 400, validationBody("body", [{ path: "", message: error.message }]))
    }
    console.error(`baseline: ${request.id} ${request.method} ${request.url} failed`, error)
    return sendError(reply, 500, "internal_error", "Internal server error")
  })

  const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization
    const token = header !== undefined && /^bearer /i.test(header) ? header.slice(7).trim() : ""
    if (KEY_SHAPE.test(token)) {
      const { rows } = await pool.query({ ...AUTH, values: [sha256(token)] })
      const row = rows[0]
      if (row !== undefined) {
        request.principal = {
          accountId: row.account_id,
          userId: row.user_id,
          ownerUserId: row.owner_user_id,
          role: row.role,
          scopes: row.scopes
        }
        return
      }
    }
    reply.header("www-authenticate", "Bearer")
    return sendError(reply, 401, "unauthorized", "Invalid or missing API key")
  }

  const requires = (permission: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    if (!allows(request.principal!.scopes, permission)) {
      return sendError(reply, 403, "forbidden", `Insufficient scope: requires ${requiredScope(permission)}`)
    }
  }

  app.get("/api/me", { onRequest: authenticate }, async (request, reply) => {
    const principal = request.principal!
    return sendJson(
      reply,
      200,
      JSON.stringify({
        account: {
          user_id: principal.userId,
          owner_user_id: principal.ownerUserId,
          role: principal.role,
          is_owner: principal.userId === principal.ownerUserId,
          auth_type: "api_key"
        },
        scopes: principal.scopes,
        permissions: permissionsOf(principal.scopes)
      })
    )
  })

  app.get("/api/v1/leads", { onRequest: [authenticate, requires("leads.view")] }, async (request, reply) => {
    const query = request.query as Query
    const limit = integerParam(query, "limit", 1, 100, 50)
    const offset = integerParam(query, "offset", 0, OFFSET_MAX, 0)
    const problems = [limit, offset].filter((p): p is Problem => typeof p !== "number")
    if (problems.length > 0) return sendJson(reply, 400, validationBody("query", problems))
    const accountId = request.principal!.accountId
    const [page, count] = await Promise.all([
      pool.query<LeadRow>({ ...LIST_PAGE, values: [accountId, limit, offset] }),
      pool.query<{ total: string }>({ ...LIST_TOTAL, values: [accountId] })
    ])
    const total = Number(count.rows[0]!.total)
    const hasMore = page.rows.length === limit && (offset as number) + (limit as number) < total
    return sendJson(
      reply,
      200,
      JSON.stringify({
        leads: page.rows.map(leadOfRow),
        meta: {
          limit,
          offset,
          total,
          has_more: hasMore,
          next_offset: hasMore ? (offset as number) + (limit as number) : null
        }
      })
    )
  })

  /** The create itself, on the transaction's client; the response as status and JSON text. */
  const createLead = async (
    client: pg.PoolClient,
    accountId: string,
    checked: ReturnType<typeof validateCreate>
  ): Promise<readonly [number, string]> => {
    if ("problems" in checked) return [400, validationBody("body", checked.problems)]
    const draft = checked.draft
    if (draft.assignedUserId !== null) {
      const user = await client.query({ ...USER_IN_ACCOUNT, values: [accountId, draft.assignedUserId] })
      if (user.rowCount === 0) {
        return [400, validationBody("body", [{ path: "assigned_user_id", message: "no such user in this account" }])]
      }
    }
    const id = newId("ld_")
    const now = new Date()
    const inserted = await client.query({
      ...INSERT_LEAD,
      values: [
        id,
        accountId,
        draft.name,
        draft.phone,
        draft.email,
        draft.tags,
        draft.status,
        draft.assignedUserId,
        draft.attributesJson,
        now
      ]
    })
    if (inserted.rowCount === 0) {
      return [409, JSON.stringify({ error: `A lead with phone ${draft.phone} already exists`, code: "conflict" })]
    }
    const createdAt = now.toISOString()
    const lead = JSON.stringify({
      id,
      name: draft.name,
      phone: draft.phone,
      email: draft.email,
      tags: draft.tags,
      status: draft.status,
      assigned_user_id: draft.assignedUserId,
      attributes: draft.attributes,
      created_at: createdAt,
      updated_at: createdAt
    })
    const eventId = newId("evt_")
    const event = `{"id":"${eventId}","type":"lead.created","created_at":"${createdAt}","account_id":"${accountId}","data":${lead}}`
    await client.query({ ...INSERT_EVENT, values: [eventId, accountId, "lead.created", event, now] })
    return [201, lead]
  }

  app.post("/api/v1/leads", { onRequest: [authenticate, requires("leads.create")] }, async (request, reply) => {
    const accountId = request.principal!.accountId
    const header = request.headers["idempotency-key"]
    if (header !== undefined && (typeof header !== "string" || !IDEMPOTENCY_KEY.test(header))) {
      return sendJson(
        reply,
        400,
        JSON.stringify({
          error: "Idempotency-Key must be 1 to 200 printable ASCII characters",
          code: "validation_error",
          details: [{ path: "Idempotency-Key", message: "must be 1 to 200 printable ASCII characters" }]
        })
      )
    }
    const checked = validateCreate(request.body)
    // Without a key, a bad body is refused before the database is touched.
    if (header === undefined && "problems" in checked) {
      return sendJson(reply, 400, validationBody("body", checked.problems))
    }

    const client = await pool.connect()
    let broken: Error | undefined
    try {
      await client.query("BEGIN")
      if (header !== undefined) {
        const fingerprint = sha256(`POST ${request.url}\n${request.rawBody ?? ""}`)
        const reserved = await client.query({ ...RESERVE, values: [accountId, header, fingerprint] })
        if (reserved.rowCount === 0) {
          const found = await client.query({ ...FIND, values: [accountId, header] })
          await client.query("ROLLBACK")
          const stored = found.rows[0]
          if (stored === undefined || stored.status_code === null) {
            reply.header("retry-after", "1")
            return sendError(
              reply,
              409,
              "idempotency_in_progress",
              "A request with this Idempotency-Key is still being processed"
            )
          }
          if (!fingerprint.equals(stored.fingerprint)) {
            return sendError(
              reply,
              422,
              "idempotency_key_reused",
              "This Idempotency-Key was already used with a different method, path or body"
            )
          }
          reply.header("idempotent-replayed", "true")
          return sendJson(reply, stored.status_code, stored.response_body)
        }
      }
      const [status, body] = await createLead(client, accountId, checked)
      if (header !== undefined) await client.query({ ...STORE, values: [accountId, header, status, body] })
      await client.query("COMMIT")
      return sendJson(reply, status, body)
    } catch (error) {
      await client.query("ROLLBACK").catch((rollback: Error) => {
        broken = rollback
      })
      throw error
    } finally {
      client.release(broken)
    }
  })

  const host = options.host ?? "127.0.0.1"
  await app.listen({ port: options.port ?? 0, host })
  const { port } = app.server.address() as AddressInfo
  return {
    url: `http://${host}:${port}`,
    pool,
    close: async () => {
      clearInterval(purge)
      await app.close()
      await pool.end()
    }
  }
}

if (import.meta.main) {
  const databaseUrl = process.env.DATABASE_URL
  if (databaseUrl === undefined) {
    console.error("DATABASE_URL is required")
    process.exit(1)
  }
  const server = await start({
    databaseUrl,
    port: Number(process.env.PORT ?? 3001),
    host: process.env.HOST ?? "127.0.0.1"
  })
  console.log(`Listening on ${server.url}`)
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.once("SIGTERM", stop)
  process.once("SIGINT", stop)
}

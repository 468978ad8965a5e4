/**
 * The hand-written baseline Leadline is benchmarked against: plain fastify + pg
 * (node-postgres), the same three routes with the same semantics, on the schema
 * Leadline's migrations create. See README.md beside this file.
 *
 * Run alone: `DATABASE_URL=postgres://… PORT=3001 node bench/baseline/Server.ts`.
 */
import { createHash, getRandomValues, randomUUID } from "node:crypto"
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify"
import { parsePhoneNumberFromString } from "libphonenumber-js"
import pg from "pg"

// ---------------------------------------------------------------------------
// Scopes and permissions (docs/contract.md)
// ---------------------------------------------------------------------------

// Order matters: for a permission granted by several scopes the first listed is
// the narrowest, and is the one a 403 names.
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
const BY_SCOPE = new Map(GRANTS)
const ALL_PERMISSIONS = [
  ...new Set([...GRANTS.flatMap(([, permissions]) => permissions), "webhooks.manage", "catalogue.manage"])
].sort()

const permissionsOf = (scopes: ReadonlyArray<string>): ReadonlyArray<string> =>
  scopes.length === 0 ? ALL_PERMISSIONS : [...new Set(scopes.flatMap((scope) => BY_SCOPE.get(scope) ?? []))].sort()

/** A key with no scopes has full access. */
const allows = (scopes: ReadonlyArray<string>, permission: string): boolean =>
  scopes.length === 0 || scopes.some((scope) => BY_SCOPE.get(scope)?.includes(permission) === true)

// ---------------------------------------------------------------------------
// Ids, hashes, wire bodies
// ---------------------------------------------------------------------------

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"

// One call to the CSPRNG per 4 KiB of random bytes rather than one per id (as Leadline's core does).
const randomPool = new Uint8Array(4096)
let randomOffset = randomPool.length

/** A lower-case ULID: 10 chars of milliseconds, then 16 random chars (as Leadline's core). */
const ulid = (millis: number): string => {
  let time = ""
  let t = millis
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time
    t = Math.floor(t / 32)
  }
  if (randomOffset + 16 > randomPool.length) {
    getRandomValues(randomPool)
    randomOffset = 0
  }
  let rand = ""
  for (let i = 0; i < 16; i++) rand += CROCKFORD[randomPool[randomOffset + i]! % 32]
  randomOffset += 16
  return time + rand
}

const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex")

const errorBody = (error: string, code: string): string => JSON.stringify({ error, code })

interface Detail {
  readonly path: string
  readonly message: string
}

const validationBody = (where: string, details: ReadonlyArray<Detail>): string => {
  const first = details[0]!
  const summary = first.path === "" ? first.message : `${first.path}: ${first.message}`
  return JSON.stringify({ error: `Invalid request ${where}: ${summary}`, code: "validation_error", details })
}

const UNAUTHORIZED = errorBody("Invalid or missing API key", "unauthorized")
const forbidden = (scope: string) => errorBody(`Insufficient scope: requires ${scope}`, "forbidden")

/** A response as it went out: what an idempotency record stores and replays. */
interface Answer {
  readonly status: number
  readonly contentType: string
  readonly body: string
}

/** What an idempotent create ends with: the answer, and a header to add (replay, retry). */
interface Outcome {
  readonly answer: Answer
  readonly header?: readonly [string, string]
}

const JSON_TYPE = "application/json"
const answer = (status: number, body: string): Answer => ({ status, contentType: JSON_TYPE, body })

const send = (reply: FastifyReply, status: number, body: string, contentType = JSON_TYPE): FastifyReply =>
  reply.code(status).header("content-type", contentType).header("x-request-id", reply.request.id).send(body)

// ---------------------------------------------------------------------------
// Authentication
// ---------------------------------------------------------------------------

interface Principal {
  readonly accountId: string
  readonly userId: string
  readonly ownerUserId: string
  readonly role: string
  readonly scopes: ReadonlyArray<string>
}

const KEY_SHAPE = /^lk_[A-Za-z0-9_-]{43}$/

/** The credential of `Authorization: Bearer <key>` (scheme case-insensitive, one or more spaces). */
const bearer = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined || authorization.length <= 6 || authorization.charCodeAt(6) !== 32) return undefined
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return undefined
  let start = 7
  while (authorization.charCodeAt(start) === 32) start++
  return start === authorization.length ? undefined : authorization.slice(start)
}

const FIND_GRANT = `SELECT k.account_id, k.user_id, k.scopes, u.role, a.owner_user_id
  FROM api_keys k JOIN users u ON u.id = k.user_id JOIN accounts a ON a.id = k.account_id
  WHERE k.hash = $1 AND k.revoked_at IS NULL`

// ---------------------------------------------------------------------------
// Leads
// ---------------------------------------------------------------------------

interface Lead {
  readonly id: string
  readonly name: string
  readonly phone: string
  readonly email: string | null
  readonly tags: ReadonlyArray<string>
  readonly status: string
  readonly assigned_user_id: string | null
  readonly attributes: Record<string, unknown>
  readonly created_at: string
  readonly updated_at: string
}

interface LeadRow {
  readonly id: string
  readonly name: string
  readonly phone: string
  readonly email: string | null
  readonly tags: ReadonlyArray<string>
  readonly status: string
  readonly assigned_user_id: string | null
  readonly attributes: Record<string, unknown>
  readonly created_at: Date
  readonly updated_at: Date
}

const toLead = (row: LeadRow): Lead => ({
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

const PAGE = `SELECT id, name, phone, email, tags, status, assigned_user_id, attributes, created_at, updated_at
  FROM leads WHERE account_id = $1::uuid ORDER BY created_at DESC, id DESC LIMIT $2::int OFFSET $3::int`
const TOTAL = "SELECT total FROM lead_counts WHERE account_id = $1::uuid"

/** Only plain decimal integers: "1.5", "1e2", " 5" and "abc" are refused, never coerced. */
const INTEGER = /^-?\d{1,15}$/

/** limit 1..100 (default 50), offset >= 0 (default 0); the first bad one is reported. */
const pageOf = (query: Record<string, unknown>): { limit: number; offset: number } | Detail => {
  const parse = (name: string, fallback: number, ok: (n: number) => boolean, message: string): number | Detail => {
    const raw = query[name]
    if (raw === undefined) return fallback
    if (typeof raw !== "string") return { path: name, message: "Expected string | undefined" }
    if (!INTEGER.test(raw)) return { path: name, message: "Expected an integer" }
    const value = Number(raw)
    return ok(value) ? value : { path: name, message }
  }
  const limit = parse("limit", 50, (n) => n >= 1 && n <= 100, "limit must be an integer from 1 to 100")
  if (typeof limit !== "number") return limit
  const offset = parse("offset", 0, (n) => n >= 0, "offset must be a non-negative integer")
  if (typeof offset !== "number") return offset
  return { limit, offset }
}

// The create body, checked field by field with the messages of Leadline's schema.
const PHONE_MESSAGE = "phone must be an international number with a leading +, e.g. +14155550100"
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const STATUSES = new Set(["new", "contacted", "qualified", "won", "lost"])
const FIELDS = new Set(["name", "phone", "email", "tags", "status", "assigned_user_id", "attributes"])
const MAX_ATTRIBUTES_BYTES = 16 * 1024

/** The E.164 form of a valid international number, or undefined. */
const normalizePhone = (input: string): string | undefined => {
  if (input.length > 64) return undefined
  const parsed = parsePhoneNumberFromString(input)
  return parsed?.isValid() === true && input.trimStart().startsWith("+") ? parsed.number : undefined
}

interface CreateInput {
  readonly name: string
  readonly phone: string
  readonly email: string | null
  readonly tags: ReadonlyArray<string>
  readonly status: string
  readonly assigned_user_id: string | null
  readonly attributes: Record<string, unknown>
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const decodeCreate = (raw: string): CreateInput | ReadonlyArray<Detail> => {
  let body: unknown
  try {
    body = raw === "" ? undefined : JSON.parse(raw)
  } catch {
    return [{ path: "", message: "Expected a valid JSON body" }]
  }
  if (!isObject(body)) return [{ path: "", message: "Expected CreateLead" }]
  const details: Array<Detail> = []
  for (const key of Object.keys(body)) {
    if (!FIELDS.has(key)) details.push({ path: key, message: "Expected no excess property" })
  }
  const { name, phone, email, tags, status, assigned_user_id, attributes } = body

  if (!Object.hasOwn(body, "name")) details.push({ path: "name", message: "Missing key" })
  else if (typeof name !== "string") details.push({ path: "name", message: "Expected string" })
  else if (name.length < 1) details.push({ path: "name", message: "name must not be empty" })
  else if (name.length > 200) details.push({ path: "name", message: "name must be at most 200 characters" })

  const e164 = typeof phone === "string" ? normalizePhone(phone) : undefined
  if (!Object.hasOwn(body, "phone")) details.push({ path: "phone", message: "Missing key" })
  else if (typeof phone !== "string") details.push({ path: "phone", message: "Expected string" })
  else if (e164 === undefined) details.push({ path: "phone", message: PHONE_MESSAGE })

  if (email !== undefined && email !== null) {
    if (typeof email !== "string") details.push({ path: "email", message: "Expected string | null | null" })
    else {
      if (email.length > 254) details.push({ path: "email", message: "email must be at most 254 characters" })
      if (!EMAIL.test(email)) details.push({ path: "email", message: "email must be an email address" })
    }
  }

  if (tags !== undefined && tags !== null) {
    if (!Array.isArray(tags)) details.push({ path: "tags", message: "Expected array | null" })
    else {
      const before = details.length
      tags.forEach((tag: unknown, i) => {
        if (typeof tag !== "string") details.push({ path: `tags.${i}`, message: "Expected string" })
        else if (tag.length < 1) details.push({ path: `tags.${i}`, message: "a tag must not be empty" })
        else if (tag.length > 64) details.push({ path: `tags.${i}`, message: "a tag must be at most 64 characters" })
      })
      if (details.length === before && tags.length > 50) details.push({ path: "tags", message: "at most 50 tags" })
    }
  }

  if (status !== undefined && status !== null) {
    if (typeof status !== "string") details.push({ path: "status", message: "Expected LeadStatus | null" })
    else if (!STATUSES.has(status)) details.push({ path: "status", message: "Expected LeadStatus" })
  }

  if (assigned_user_id !== undefined && assigned_user_id !== null && typeof assigned_user_id !== "string") {
    details.push({ path: "assigned_user_id", message: "Expected string | null | null" })
  }

  if (attributes !== undefined && attributes !== null) {
    if (!isObject(attributes)) details.push({ path: "attributes", message: "Expected object | null" })
    else if (Buffer.byteLength(JSON.stringify(attributes)) > MAX_ATTRIBUTES_BYTES) {
      details.push({ path: "attributes", message: "attributes must be at most 16 KiB of JSON" })
    }
  }

  if (details.length > 0) return details
  return {
    name: name as string,
    phone: e164!,
    email: (email as string | null | undefined) ?? null,
    tags: (tags as Array<string> | null | undefined) ?? [],
    status: (status as string | null | undefined) ?? "new",
    assigned_user_id: (assigned_user_id as string | null | undefined) ?? null,
    attributes: (attributes as Record<string, unknown> | null | undefined) ?? {}
  }
}

const FIND_USER = "SELECT id FROM users WHERE id = $1::uuid AND account_id = $2::uuid"
// The lead and its count in one statement, as SqlLeads does.
const INSERT_LEAD = `WITH inserted AS (
    INSERT INTO leads (account_id, id, name, phone, email, tags, status, assigned_user_id, attributes, created_at, updated_at)
    VALUES ($1::uuid, $2, $3, $4, $5, $6::jsonb, $7, $8::uuid, $9::jsonb, $10::timestamptz, $11::timestamptz)
    ON CONFLICT (account_id, phone) DO NOTHING
    RETURNING account_id
  ), counted AS (
    INSERT INTO lead_counts (account_id, total) SELECT account_id, 1 FROM inserted
    ON CONFLICT (account_id) DO UPDATE SET total = lead_counts.total + 1
  )
  SELECT count(*)::int AS inserted FROM inserted`
// The event and the lookup of its subscribers in one statement, as SqlOutbox does.
const INSERT_EVENT_SUBSCRIBED = `WITH recorded AS (
    INSERT INTO events (id, account_id, type, created_at, payload, body)
    VALUES ($1, $2::uuid, $3, $4::timestamptz, $5::jsonb, $6)
  )
  SELECT id FROM webhook_endpoints
  WHERE account_id = $2::uuid AND deleted_at IS NULL AND enabled AND events @> jsonb_build_array($3::text)`

/** One multi-row insert of pending deliveries; one prepared statement per row count. */
const insertDeliveries = (count: number): string => {
  const rows: Array<string> = []
  for (let i = 0; i < count; i++) {
    const p = i * 9
    rows.push(
      `($${p + 1}, $${p + 2}::uuid, $${p + 3}, $${p + 4}, $${p + 5}::uuid, $${p + 6}, $${p + 7}::timestamptz, $${p + 8}::timestamptz, $${p + 9}::timestamptz)`
    )
  }
  // The deliveries carry the wake-up, as SqlOutbox's do.
  return `WITH queued AS (
      INSERT INTO webhook_deliveries (id, account_id, event_id, event_type, endpoint_id, status, next_attempt_at, created_at, updated_at)
      VALUES ${rows.join(", ")} RETURNING 1
    )
    SELECT pg_notify('leadline_deliveries', '') FROM (SELECT 1 FROM queued LIMIT 1) AS one`
}

// ---------------------------------------------------------------------------
// Idempotency (the same statements as Leadline's SqlIdempotency)
// ---------------------------------------------------------------------------

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,200}$/
const RETENTION_MS = 24 * 60 * 60 * 1000
const INVALID_KEY = JSON.stringify({
  error: "Idempotency-Key must be 1 to 200 printable ASCII characters",
  code: "validation_error",
  details: [{ path: "Idempotency-Key", message: "must be 1 to 200 printable ASCII characters" }]
})
const KEY_REUSED = errorBody(
  "This Idempotency-Key was already used with a different method, path or body",
  "idempotency_key_reused"
)
const IN_PROGRESS = errorBody(
  "A request with this Idempotency-Key is still in progress; retry shortly",
  "idempotency_in_progress"
)

const RESERVE = `INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at, expires_at)
  VALUES ($1::uuid, $2, $3, $4::timestamptz, $5::timestamptz)
  ON CONFLICT (account_id, key) DO UPDATE SET
    fingerprint = EXCLUDED.fingerprint, status = NULL, content_type = NULL, body = NULL,
    created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
  WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
  RETURNING key`
const READ_KEY = `SELECT fingerprint, status, content_type, body FROM idempotency_keys
  WHERE account_id = $1::uuid AND key = $2`
const COMPLETE = `UPDATE idempotency_keys SET status = $3::int, content_type = $4, body = $5
  WHERE account_id = $1::uuid AND key = $2`

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

export interface StartOptions {
  readonly databaseUrl: string
  /** 0 (the default) picks a free port. */
  readonly port?: number
  readonly host?: string
}

export interface Started {
  readonly url: string
  readonly close: () => Promise<void>
}

type Queryable = pg.Pool | pg.PoolClient

const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "57P01"])

export const start = async (options: StartOptions): Promise<Started> => {
  // Pool size 10, as Leadline's default (`maxConnections`).
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 })
  pool.on("error", (error) => console.error("idle database client failed", error))

  /**
   * One query per request, like Leadline: principals are NOT cached across
   * requests, so a revoked key or changed scopes take effect on the next request.
   */
  const authenticate = async (request: FastifyRequest): Promise<Principal | undefined> => {
    const key = bearer(request.headers.authorization)
    if (key === undefined || !KEY_SHAPE.test(key)) return undefined
    const { rows } = await pool.query<{
      account_id: string
      user_id: string
      scopes: Array<string>
      role: string
      owner_user_id: string
    }>({ name: "find_grant", text: FIND_GRANT, values: [sha256Hex(key)] })
    const row = rows[0]
    if (row === undefined) return undefined
    return {
      accountId: row.account_id,
      userId: row.user_id,
      ownerUserId: row.owner_user_id,
      role: row.role,
      scopes: row.scopes
    }
  }

  const unauthorized = (reply: FastifyReply) => send(reply.header("www-authenticate", "Bearer"), 401, UNAUTHORIZED)

  /** Everything of a create that comes before its writes: the body, the scopes, the assignee. */
  const prepareCreate = async (db: Queryable, principal: Principal, raw: string): Promise<Answer | Lead> => {
    const input = decodeCreate(raw)
    if (Array.isArray(input)) return answer(400, validationBody("body", input))
    const valid = input as CreateInput
    if (!allows(principal.scopes, "leads.create")) return answer(403, forbidden("leads:write"))
    if (valid.assigned_user_id !== null) {
      if (!allows(principal.scopes, "leads.assign")) return answer(403, forbidden("leads:write"))
      const found =
        UUID.test(valid.assigned_user_id) &&
        (
          await db.query({
            name: "find_user",
            text: FIND_USER,
            values: [valid.assigned_user_id, principal.accountId]
          })
        ).rows.length > 0
      if (!found) {
        return answer(
          400,
          JSON.stringify({
            error: "assigned_user_id is not a user of this account",
            code: "validation_error",
            details: [{ path: "assigned_user_id", message: "no such user in this account" }]
          })
        )
      }
    }
    const now = new Date().toISOString()
    return {
      id: `ld_${ulid(Date.now())}`,
      name: valid.name,
      phone: valid.phone,
      email: valid.email,
      tags: valid.tags,
      status: valid.status,
      assigned_user_id: valid.assigned_user_id,
      attributes: valid.attributes,
      created_at: now,
      updated_at: now
    }
  }

  /** The writes of a create, inside the caller's transaction: lead, count, event, deliveries. */
  const writeLead = async (client: pg.PoolClient, accountId: string, lead: Lead): Promise<Answer> => {
    // ON CONFLICT instead of catching the violation: a failed statement would
    // poison the transaction, and an idempotency record must still commit.
    const inserted = await client.query({
      name: "insert_lead",
      text: INSERT_LEAD,
      values: [
        accountId,
        lead.id,
        lead.name,
        lead.phone,
        lead.email,
        JSON.stringify(lead.tags),
        lead.status,
        lead.assigned_user_id,
        JSON.stringify(lead.attributes),
        lead.created_at,
        lead.updated_at
      ]
    })
    if (inserted.rows[0]?.inserted !== 1) {
      return answer(409, errorBody(`A lead with phone ${lead.phone} already exists`, "conflict"))
    }
    const createdAt = new Date().toISOString()
    const event = {
      id: `evt_${ulid(Date.now())}`,
      type: "lead.created",
      created_at: createdAt,
      account_id: accountId,
      data: lead
    }
    const envelope = JSON.stringify(event)
    const subscribed = await client.query<{ id: string }>({
      name: "insert_event_subscribed",
      text: INSERT_EVENT_SUBSCRIBED,
      values: [event.id, accountId, event.type, createdAt, envelope, envelope]
    })
    if (subscribed.rows.length > 0) {
      const values: Array<string> = []
      for (const endpoint of subscribed.rows) {
        const id = `dlv_${ulid(Date.now())}`
        values.push(id, accountId, event.id, event.type, endpoint.id, "pending", createdAt, createdAt, createdAt)
      }
      const count = subscribed.rows.length
      await client.query({ name: `insert_deliveries_${count}`, text: insertDeliveries(count), values })
    }
    return answer(201, JSON.stringify(lead))
  }

  /** Runs `work` between BEGIN and COMMIT (or ROLLBACK when it says so, or throws) on one pooled client. */
  const transaction = async <A>(work: (client: pg.PoolClient) => Promise<{ commit: boolean; value: A }>) => {
    const client = await pool.connect()
    let broken: Error | undefined
    try {
      await client.query("BEGIN")
      const { commit, value } = await work(client)
      await client.query(commit ? "COMMIT" : "ROLLBACK")
      return value
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        broken = rollbackError
      })
      throw error
    } finally {
      client.release(broken)
    }
  }

  const app = Fastify({
    logger: false,
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
    genReqId: () => randomUUID()
  })

  // JSON only (anything else is 415), kept raw: the idempotency fingerprint is taken over its exact bytes.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => done(null, body))

  app.get("/api/me", async (request, reply) => {
    const principal = await authenticate(request)
    if (principal === undefined) return unauthorized(reply)
    return send(
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

  app.get("/api/v1/leads", async (request, reply) => {
    const principal = await authenticate(request)
    if (principal === undefined) return unauthorized(reply)
    const page = pageOf(request.query as Record<string, unknown>)
    if (!("limit" in page)) return send(reply, 400, validationBody("query", [page]))
    if (!allows(principal.scopes, "leads.view")) return send(reply, 403, forbidden("leads:read"))
    const [rows, count] = await Promise.all([
      pool.query<LeadRow>({ name: "page", text: PAGE, values: [principal.accountId, page.limit, page.offset] }),
      pool.query<{ total: number }>({ name: "total", text: TOTAL, values: [principal.accountId] })
    ])
    const total = count.rows[0]?.total ?? 0
    const next = page.offset + page.limit
    const hasMore = next < total
    return send(
      reply,
      200,
      JSON.stringify({
        leads: rows.rows.map(toLead),
        meta: { limit: page.limit, offset: page.offset, total, has_more: hasMore, next_offset: hasMore ? next : null }
      })
    )
  })

  app.post("/api/v1/leads", async (request, reply) => {
    const principal = await authenticate(request)
    if (principal === undefined) return unauthorized(reply)
    const raw = typeof request.body === "string" ? request.body : ""
    const key = request.headers["idempotency-key"]

    if (key === undefined) {
      const prepared = await prepareCreate(pool, principal, raw)
      if (!("id" in prepared)) return send(reply, prepared.status, prepared.body)
      const created = await transaction(async (client) => {
        const result = await writeLead(client, principal.accountId, prepared)
        return { commit: result.status < 400, value: result }
      })
      return send(reply, created.status, created.body)
    }

    if (typeof key !== "string" || !IDEMPOTENCY_KEY.test(key)) return send(reply, 400, INVALID_KEY)
    const fingerprint = createHash("sha256").update(`${request.method} ${request.url}\n`).update(raw).digest("hex")
    const now = Date.now()
    // The record and the create's writes commit together: a crash between them
    // can neither lose the response nor run the create twice.
    const outcome = await transaction<Outcome>(async (client) => {
      const reserved = await client.query({
        name: "reserve",
        text: RESERVE,
        values: [
          principal.accountId,
          key,
          fingerprint,
          new Date(now).toISOString(),
          new Date(now + RETENTION_MS).toISOString()
        ]
      })
      if (reserved.rows.length === 0) {
        // Taken: a twin inserting the same key waited on the unique index until that
        // transaction ended, so the stored response is there to replay.
        const { rows } = await client.query<{
          fingerprint: string
          status: number | null
          content_type: string | null
          body: string | null
        }>({ name: "read_key", text: READ_KEY, values: [principal.accountId, key] })
        const row = rows[0]
        if ((row?.fingerprint ?? fingerprint) !== fingerprint) {
          return { commit: false, value: { answer: answer(422, KEY_REUSED) } }
        }
        if (row === undefined || row.status === null) {
          return { commit: false, value: { answer: answer(409, IN_PROGRESS), header: ["retry-after", "1"] } }
        }
        const stored = { status: row.status, contentType: row.content_type ?? JSON_TYPE, body: row.body ?? "" }
        return { commit: true, value: { answer: stored, header: ["idempotent-replayed", "true"] } }
      }
      const prepared = await prepareCreate(client, principal, raw)
      const result = "id" in prepared ? await writeLead(client, principal.accountId, prepared) : prepared
      // Every answer below 500 is kept (errors come from exceptions, which roll back and release the key).
      await client.query({
        name: "complete",
        text: COMPLETE,
        values: [principal.accountId, key, result.status, result.contentType, result.body]
      })
      return { commit: true, value: { answer: result } }
    })
    if (outcome.header !== undefined) reply.header(outcome.header[0], outcome.header[1])
    return send(reply, outcome.answer.status, outcome.answer.body, outcome.answer.contentType)
  })

  app.setNotFoundHandler((_request, reply) => send(reply, 404, errorBody("No such route", "not_found")))

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    switch (error.code) {
      case "FST_ERR_CTP_BODY_TOO_LARGE":
        return send(
          reply.header("connection", "close"),
          413,
          errorBody("The request body is over the limit of 1048576 bytes", "payload_too_large")
        )
      case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
        return send(reply, 415, errorBody("The request body must be application/json", "unsupported_media_type"))
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return send(reply, 400, errorBody("The request could not be read", "validation_error"))
    }
    if (error.code !== undefined && UNREACHABLE.has(error.code)) {
      return send(
        reply.header("retry-after", "1"),
        503,
        errorBody("The database is unreachable; retry shortly", "service_unavailable")
      )
    }
    console.error(`request ${request.id} failed`, error)
    return send(reply, 500, errorBody("Internal server error", "internal_error"))
  })

  const host = options.host ?? "127.0.0.1"
  try {
    await app.listen({ port: options.port ?? 0, host })
  } catch (error) {
    await pool.end()
    throw error
  }
  const address = app.server.address()
  const port = typeof address === "object" && address !== null ? address.port : options.port
  return {
    url: `http://${host}:${port}`,
    close: async () => {
      await app.close()
      await pool.end()
    }
  }
}

// Standalone: `node bench/baseline/Server.ts` with DATABASE_URL and PORT (HOST optional).
if (process.argv[1] === import.meta.filename) {
  const databaseUrl = process.env.DATABASE_URL
  if (databaseUrl === undefined || databaseUrl === "") {
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
      (error: unknown) => {
        console.error(error)
        process.exit(1)
      }
    )
  }
  process.once("SIGTERM", stop)
  process.once("SIGINT", stop)
}

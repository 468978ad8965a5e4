import { Duration, Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { beforeAll, describe, expect, it } from "vitest"
import * as Client from "@leadline/http-adapter/Client"
import { type AccountFixture, makeAccount, makeKey, makeUser, nextPhone } from "./Fixtures.ts"
import { call } from "./Http.ts"
import type { Target } from "./TestServer.ts"

export interface ContractTarget extends Target {
  /** A target whose clock the test can move also gets the 24 h idempotency expiry check. */
  readonly clock?: { readonly advance: (duration: Duration.Input) => void } | undefined
}

export interface SuiteOptions {
  /** Set when the target will have a `clock`: adds the tests that move time. */
  readonly movableClock?: boolean | undefined
}

const UNAUTHORIZED = { error: "Invalid or missing API key", code: "unauthorized" }
const forbidden = (scope: string) => ({ error: `Insufficient scope: requires ${scope}`, code: "forbidden" })

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

/** The fields of a lead on the wire, sorted (docs/contract.md). */
export const LEAD_KEYS = [
  "assigned_user_id",
  "attributes",
  "created_at",
  "email",
  "id",
  "name",
  "phone",
  "status",
  "tags",
  "updated_at"
]

/**
 * The HTTP contract of Leadline (CONTRACT.md), written once against a base URL
 * and an admin token: it runs on the in-memory wiring, on the SQL wirings and
 * against any live deployment. Every test makes its own accounts, so it leaves
 * a live target's other data alone.
 */
export const contractSuite = (name: string, getTarget: () => ContractTarget, options: SuiteOptions = {}) =>
  describe(name, () => {
    let target: ContractTarget
    let acme: AccountFixture
    let other: AccountFixture

    const createLead = (key: string, body: Record<string, unknown> = {}, headers?: Record<string, string>) =>
      call(target, "POST", "/api/v1/leads", {
        auth: key,
        json: { name: "Ada Lovelace", phone: nextPhone(), ...body },
        headers
      })

    /** Every lead id the key can list, page by page through `next_offset`. */
    const allLeadIds = async (key: string, limit: number) => {
      const ids: Array<string> = []
      let offset: number | null = 0
      while (offset !== null) {
        const page = await call(target, "GET", `/api/v1/leads?limit=${limit}&offset=${offset}`, { auth: key })
        expect(page.status).toBe(200)
        ids.push(...page.body.leads.map((lead: { id: string }) => lead.id))
        offset = page.body.meta.next_offset
      }
      return ids
    }

    beforeAll(async () => {
      target = getTarget()
      acme = await makeAccount(target, {
        name: "Acme",
        keys: {
          leadsRead: ["leads:read"],
          leadsWrite: ["leads:write"],
          analytics: ["analytics:read"],
          conversations: ["conversations:read"],
          mixed: ["leads:read", "analytics:read"]
        }
      })
      other = await makeAccount(target, { name: "Other" })
    })

    describe("authentication", () => {
      it("answers 401 with one body for missing, malformed, unknown and revoked keys", async () => {
        const revoked = await makeKey(target, acme.accountId, { name: "to revoke" })
        const revoke = await call(target, "DELETE", `/admin/v1/keys/${revoked.id}`, { auth: target.adminToken })
        expect(revoke.status).toBe(200)
        expect(revoke.body).toEqual({ id: revoked.id, revoked: true })

        const unknownKey = `lk_${"A".repeat(43)}`
        const attempts = [
          await call(target, "GET", "/api/me"),
          await call(target, "GET", "/api/me", { headers: { authorization: "Basic dXNlcjpwYXNz" } }),
          await call(target, "GET", "/api/me", { auth: "not-a-key" }),
          await call(target, "GET", "/api/me", { auth: unknownKey }),
          await call(target, "GET", "/api/me", { auth: revoked.apiKey })
        ]
        for (const reply of attempts) {
          expect(reply.status).toBe(401)
          expect(reply.body).toEqual(UNAUTHORIZED)
          expect(reply.headers.get("www-authenticate")).toBe("Bearer")
        }
      })

      it("applies a scope change on the key's next request", async () => {
        const key = await makeKey(target, acme.accountId, { scopes: ["leads:read"] })
        expect((await call(target, "GET", "/api/usage", { auth: key.apiKey })).status).toBe(403)
        const patched = await call(target, "PATCH", `/admin/v1/keys/${key.id}`, {
          auth: target.adminToken,
          json: { scopes: ["analytics:read"] }
        })
        expect(patched.status).toBe(200)
        expect(patched.body.scopes).toEqual(["analytics:read"])
        expect((await call(target, "GET", "/api/usage", { auth: key.apiKey })).status).toBe(200)
        expect((await call(target, "GET", "/api/v1/leads", { auth: key.apiKey })).status).toBe(403)
      })
    })

    describe("GET /api/me", () => {
      it("describes a full-access key: no scopes, every permission", async () => {
        const reply = await call(target, "GET", "/api/me", { auth: acme.ownerKey })
        expect(reply.status).toBe(200)
        expect(reply.body).toEqual({
          account: {
            user_id: acme.ownerUserId,
            owner_user_id: acme.ownerUserId,
            role: "owner",
            is_owner: true,
            auth_type: "api_key"
          },
          scopes: [],
          permissions: ALL_PERMISSIONS
        })
      })

      it("lists a scoped key's scopes as given and the union of their permissions, sorted", async () => {
        const reply = await call(target, "GET", "/api/me", { auth: acme.keys.mixed!.apiKey })
        expect(reply.status).toBe(200)
        expect(reply.body.scopes).toEqual(["leads:read", "analytics:read"])
        expect(reply.body.permissions).toEqual(["analytics.view", "leads.view"])
        const writer = await call(target, "GET", "/api/me", { auth: acme.keys.leadsWrite!.apiKey })
        expect(writer.body.permissions).toEqual([
          "leads.assign",
          "leads.create",
          "leads.delete",
          "leads.update",
          "leads.view"
        ])
      })

      it("describes a member user's key", async () => {
        const memberId = await makeUser(target, acme.accountId, "member")
        const key = await makeKey(target, acme.accountId, { userId: memberId, scopes: ["leads:read"] })
        const reply = await call(target, "GET", "/api/me", { auth: key.apiKey })
        expect(reply.status).toBe(200)
        expect(reply.body.account).toEqual({
          user_id: memberId,
          owner_user_id: acme.ownerUserId,
          role: "member",
          is_owner: false,
          auth_type: "api_key"
        })
      })
    })

    describe("GET /api/usage", () => {
      it("reports the plan's limit and this month's use to analytics:read", async () => {
        const pro = await makeAccount(target, { plan: "pro", keys: { analytics: ["analytics:read"] } })
        const reply = await call(target, "GET", "/api/usage", { auth: pro.keys.analytics!.apiKey })
        expect(reply.status).toBe(200)
        expect(reply.body).toEqual({
          usage: { messages_used: 0, messages_limit: 10000 },
          subscription: { plan_id: "pro", status: "active" }
        })
        const free = await call(target, "GET", "/api/usage", { auth: acme.ownerKey })
        expect(free.body.usage.messages_limit).toBe(1000)
        expect(free.body.subscription.plan_id).toBe("free")
      })

      it("refuses a key without analytics:read with the exact 403 body", async () => {
        const reply = await call(target, "GET", "/api/usage", { auth: acme.keys.leadsRead!.apiKey })
        expect(reply.status).toBe(403)
        expect(reply.text).toBe(JSON.stringify(forbidden("analytics:read")))
      })
    })

    describe("scopes", () => {
      it("lets leads:read list (200) and refuses DELETE with the seed's exact body", async () => {
        const lead = await createLead(acme.ownerKey)
        const reader = acme.keys.leadsRead!.apiKey
        expect((await call(target, "GET", "/api/v1/leads", { auth: reader })).status).toBe(200)
        const refused = await call(target, "DELETE", `/api/v1/leads/${lead.body.id}`, { auth: reader })
        expect(refused.status).toBe(403)
        expect(refused.text).toBe('{"error":"Insufficient scope: requires leads:write","code":"forbidden"}')
        expect((await call(target, "GET", `/api/v1/leads/${lead.body.id}`, { auth: reader })).status).toBe(200)
      })

      it("grants read with write, and names the narrowest scope when refusing", async () => {
        const writer = acme.keys.leadsWrite!.apiKey
        expect((await call(target, "GET", "/api/v1/leads", { auth: writer })).status).toBe(200)
        const refused = await call(target, "GET", "/api/v1/leads", { auth: acme.keys.conversations!.apiKey })
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual(forbidden("leads:read"))
        const create = await createLead(acme.keys.leadsRead!.apiKey)
        expect(create.status).toBe(403)
        expect(create.body).toEqual(forbidden("leads:write"))
      })
    })

    describe("leads", () => {
      it("creates a lead with a normalised phone and the contract's defaults", async () => {
        const reply = await call(target, "POST", "/api/v1/leads", {
          auth: acme.keys.leadsWrite!.apiKey,
          json: { name: "Grace Hopper", phone: "+1 415-555 0100" }
        })
        expect(reply.status).toBe(201)
        expect(Object.keys(reply.body).sort()).toEqual(LEAD_KEYS)
        expect(reply.body).toMatchObject({
          name: "Grace Hopper",
          phone: "+14155550100",
          email: null,
          tags: [],
          status: "new",
          assigned_user_id: null,
          attributes: {}
        })
        expect(reply.body.id).toMatch(/^ld_[0-9a-z]{26}$/)
        expect(new Date(reply.body.created_at).toISOString()).toBe(reply.body.created_at)
        expect(reply.body.updated_at).toBe(reply.body.created_at)
        expect(reply.headers.get("idempotent-replayed")).toBeNull()
      })

      it("gets, updates and deletes a lead", async () => {
        const key = acme.keys.leadsWrite!.apiKey
        const memberId = await makeUser(target, acme.accountId, "admin")
        const created = await createLead(key, { email: "ada@example.com", tags: ["vip"], attributes: { source: "ad" } })
        expect(created.status).toBe(201)
        const id = created.body.id

        const got = await call(target, "GET", `/api/v1/leads/${id}`, { auth: key })
        expect(got.status).toBe(200)
        expect(got.body).toEqual(created.body)

        const updated = await call(target, "PATCH", `/api/v1/leads/${id}`, {
          auth: key,
          json: { name: "Ada King", status: "qualified", email: null, assigned_user_id: memberId }
        })
        expect(updated.status).toBe(200)
        expect(updated.body).toMatchObject({
          id,
          name: "Ada King",
          status: "qualified",
          email: null,
          assigned_user_id: memberId,
          tags: ["vip"],
          attributes: { source: "ad" },
          phone: created.body.phone,
          created_at: created.body.created_at
        })
        expect(updated.body.updated_at >= created.body.updated_at).toBe(true)

        const deleted = await call(target, "DELETE", `/api/v1/leads/${id}`, { auth: key })
        expect(deleted.status).toBe(200)
        expect(deleted.body).toEqual({ id, deleted: true })
        const gone = await call(target, "GET", `/api/v1/leads/${id}`, { auth: key })
        expect(gone.status).toBe(404)
        expect(gone.body.code).toBe("not_found")
        expect((await call(target, "DELETE", `/api/v1/leads/${id}`, { auth: key })).status).toBe(404)
      })

      it("keeps phone numbers unique per account (409), not across accounts", async () => {
        const phone = nextPhone()
        expect((await createLead(acme.ownerKey, { phone })).status).toBe(201)
        const clash = await createLead(acme.ownerKey, { phone })
        expect(clash.status).toBe(409)
        expect(clash.body).toEqual({ error: `A lead with phone ${phone} already exists`, code: "conflict" })
        expect((await createLead(other.ownerKey, { phone })).status).toBe(201)

        const second = await createLead(acme.ownerKey)
        const moved = await call(target, "PATCH", `/api/v1/leads/${second.body.id}`, {
          auth: acme.ownerKey,
          json: { phone }
        })
        expect(moved.status).toBe(409)
        expect(moved.body.code).toBe("conflict")
      })

      it("refuses an assignee that is not a user of the account", async () => {
        const reply = await createLead(acme.ownerKey, { assigned_user_id: other.ownerUserId })
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details).toEqual([{ path: "assigned_user_id", message: "no such user in this account" }])
      })
    })

    describe("pagination", () => {
      let fixture: AccountFixture
      let newestFirst: Array<string>

      beforeAll(async () => {
        fixture = await makeAccount(target, { name: "Paged" })
        const ids: Array<string> = []
        for (let i = 0; i < 5; i++) ids.push((await createLead(fixture.ownerKey, { name: `Lead ${i}` })).body.id)
        newestFirst = ids.reverse()
      })

      const list = (query: string) => call(target, "GET", `/api/v1/leads${query}`, { auth: fixture.ownerKey })

      it("gives meta on the first, middle, last and past-the-end pages", async () => {
        const first = await list("?limit=2")
        expect(first.status).toBe(200)
        expect(first.body.meta).toEqual({ limit: 2, offset: 0, total: 5, has_more: true, next_offset: 2 })
        expect(first.body.leads.map((lead: { id: string }) => lead.id)).toEqual(newestFirst.slice(0, 2))

        const middle = await list("?limit=2&offset=2")
        expect(middle.body.meta).toEqual({ limit: 2, offset: 2, total: 5, has_more: true, next_offset: 4 })
        expect(middle.body.leads.map((lead: { id: string }) => lead.id)).toEqual(newestFirst.slice(2, 4))

        const last = await list("?limit=2&offset=4")
        expect(last.body.meta).toEqual({ limit: 2, offset: 4, total: 5, has_more: false, next_offset: null })
        expect(last.body.leads).toHaveLength(1)

        const past = await list("?offset=10")
        expect(past.status).toBe(200)
        expect(past.body).toEqual({
          leads: [],
          meta: { limit: 50, offset: 10, total: 5, has_more: false, next_offset: null }
        })
      })

      it("defaults to limit 50, offset 0", async () => {
        const reply = await list("")
        expect(reply.body.meta).toEqual({ limit: 50, offset: 0, total: 5, has_more: false, next_offset: null })
      })

      it("visits every lead once, newest first, by walking next_offset", async () => {
        expect(await allLeadIds(fixture.ownerKey, 2)).toEqual(newestFirst)
      })

      it.each([
        ["limit=0", "limit"],
        ["limit=101", "limit"],
        ["limit=1.5", "limit"],
        ["limit=abc", "limit"],
        ["offset=-1", "offset"],
        ["offset=999999999999999", "offset"],
        ["offset=1e2", "offset"]
      ])("refuses %s with 400, never clamping", async (query, path) => {
        const reply = await list(`?${query}`)
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details.map((detail: { path: string }) => detail.path)).toContain(path)
      })
    })

    describe("idempotency", () => {
      it("replays the original response for the same key: same status, same body, marked", async () => {
        const body = { name: "Replay", phone: nextPhone() }
        const headers = { "idempotency-key": `replay-${crypto.randomUUID()}` }
        const first = await call(target, "POST", "/api/v1/leads", { auth: acme.ownerKey, json: body, headers })
        const second = await call(target, "POST", "/api/v1/leads", { auth: acme.ownerKey, json: body, headers })
        expect(first.status).toBe(201)
        expect(first.headers.get("idempotent-replayed")).toBeNull()
        expect(second.status).toBe(201)
        expect(second.text).toBe(first.text)
        expect(second.headers.get("idempotent-replayed")).toBe("true")
        expect(second.headers.get("content-type")).toBe("application/json")
      })

      it("refuses the same key with another body (422)", async () => {
        const headers = { "idempotency-key": `reuse-${crypto.randomUUID()}` }
        expect((await createLead(acme.ownerKey, {}, headers)).status).toBe(201)
        const reused = await createLead(acme.ownerKey, {}, headers)
        expect(reused.status).toBe(422)
        expect(reused.body).toEqual({
          error: "This Idempotency-Key was already used with a different method, path or body",
          code: "idempotency_key_reused"
        })
      })

      it("accepts a 200-character key and refuses a 201-character one", async () => {
        expect((await createLead(acme.ownerKey, {}, { "idempotency-key": "k".repeat(200) })).status).toBe(201)
        const tooLong = await createLead(acme.ownerKey, {}, { "idempotency-key": "k".repeat(201) })
        expect(tooLong.status).toBe(400)
        expect(tooLong.body.code).toBe("validation_error")
      })

      it("shares a namespace between the keys of one account, not between accounts", async () => {
        const body = { name: "Shared", phone: nextPhone() }
        const headers = { "idempotency-key": `ns-${crypto.randomUUID()}` }
        const byOwner = await call(target, "POST", "/api/v1/leads", { auth: acme.ownerKey, json: body, headers })
        expect(byOwner.status).toBe(201)
        const byWriter = await call(target, "POST", "/api/v1/leads", {
          auth: acme.keys.leadsWrite!.apiKey,
          json: body,
          headers
        })
        expect(byWriter.headers.get("idempotent-replayed")).toBe("true")
        expect(byWriter.body.id).toBe(byOwner.body.id)
        const elsewhere = await call(target, "POST", "/api/v1/leads", { auth: other.ownerKey, json: body, headers })
        expect(elsewhere.status).toBe(201)
        expect(elsewhere.headers.get("idempotent-replayed")).toBeNull()
        expect(elsewhere.body.id).not.toBe(byOwner.body.id)
      })

      it("stores a 4xx answer too: a replayed conflict stays a conflict", async () => {
        const phone = nextPhone()
        expect((await createLead(acme.ownerKey, { phone })).status).toBe(201)
        const headers = { "idempotency-key": `conflict-${crypto.randomUUID()}` }
        const first = await createLead(acme.ownerKey, { phone, name: "Clash" }, headers)
        const again = await createLead(acme.ownerKey, { phone, name: "Clash" }, headers)
        expect(first.status).toBe(409)
        expect(again.status).toBe(409)
        expect(again.text).toBe(first.text)
        expect(again.headers.get("idempotent-replayed")).toBe("true")
      })

      it("executes 20 parallel requests with one key once", async () => {
        const fixture = await makeAccount(target, { name: "Parallel" })
        const body = { name: "Once", phone: nextPhone() }
        const headers = { "idempotency-key": `parallel-${crypto.randomUUID()}` }
        const replies = await Promise.all(
          Array.from({ length: 20 }, () =>
            call(target, "POST", "/api/v1/leads", { auth: fixture.ownerKey, json: body, headers })
          )
        )
        const created = replies.filter((reply) => reply.status === 201)
        const inProgress = replies.filter((reply) => reply.status === 409)
        expect(created.length + inProgress.length).toBe(20)
        expect(created.length).toBeGreaterThanOrEqual(1)
        expect(new Set(created.map((reply) => reply.body.id)).size).toBe(1)
        expect(created.filter((reply) => reply.headers.get("idempotent-replayed") === null)).toHaveLength(1)
        for (const reply of inProgress) {
          expect(reply.body.code).toBe("idempotency_in_progress")
          expect(reply.headers.get("retry-after")).toBe("1")
        }
        const list = await call(target, "GET", "/api/v1/leads", { auth: fixture.ownerKey })
        expect(list.body.meta.total).toBe(1)
      })

      // Defined only where time can be moved, so a live target shows no skipped test.
      if (options.movableClock === true)
        it("forgets a key after 24 hours", async () => {
          if (target.clock === undefined) throw new Error("movableClock was set but the target has no clock")
          const body = { name: "Expiring", phone: nextPhone() }
          const headers = { "idempotency-key": `expiry-${crypto.randomUUID()}` }
          const first = await call(target, "POST", "/api/v1/leads", { auth: acme.ownerKey, json: body, headers })
          expect(first.status).toBe(201)
          target.clock.advance(Duration.hours(23))
          const within = await call(target, "POST", "/api/v1/leads", { auth: acme.ownerKey, json: body, headers })
          expect(within.headers.get("idempotent-replayed")).toBe("true")
          target.clock.advance(Duration.hours(1))
          const after = await call(target, "POST", "/api/v1/leads", { auth: acme.ownerKey, json: body, headers })
          // The key is free again, so the create runs anew and meets the lead it made the first time.
          expect(after.status).toBe(409)
          expect(after.headers.get("idempotent-replayed")).toBeNull()
        })
    })

    describe("tenant isolation", () => {
      it("answers 404 for another account's lead on GET, PATCH and DELETE, and never lists it", async () => {
        const theirs = await createLead(other.ownerKey)
        const id = theirs.body.id
        for (const [method, json] of [["GET"], ["PATCH", { name: "Mine now" }], ["DELETE"]] as const) {
          const reply = await call(target, method, `/api/v1/leads/${id}`, { auth: acme.ownerKey, json })
          expect(reply.status).toBe(404)
          expect(reply.body).toEqual({ error: `No lead with id ${id}`, code: "not_found" })
        }
        const unknown = await call(target, "GET", "/api/v1/leads/ld_doesnotexist", { auth: acme.ownerKey })
        expect(unknown.body).toEqual({ error: "No lead with id ld_doesnotexist", code: "not_found" })
        expect(await allLeadIds(acme.ownerKey, 100)).not.toContain(id)
        const still = await call(target, "GET", `/api/v1/leads/${id}`, { auth: other.ownerKey })
        expect(still.body.name).toBe(theirs.body.name)
      })
    })

    describe("bad input", () => {
      const post = (options: Parameters<typeof call>[3]) =>
        call(target, "POST", "/api/v1/leads", { auth: acme.ownerKey, ...options })

      it("answers malformed JSON with 400 validation_error", async () => {
        const reply = await post({ raw: '{"name":', headers: { "content-type": "application/json" } })
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(typeof reply.body.error).toBe("string")
      })

      it("answers wrong types with 400 and the fields at fault", async () => {
        const reply = await post({ json: { name: 42, phone: true } })
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details.map((detail: { path: string }) => detail.path).sort()).toEqual(["name", "phone"])
      })

      it("answers an invalid phone with 400", async () => {
        const reply = await post({ json: { name: "Bad phone", phone: "555-0100" } })
        expect(reply.status).toBe(400)
        expect(reply.body.details).toEqual([
          { path: "phone", message: "phone must be an international number with a leading +, e.g. +14155550100" }
        ])
      })

      it("refuses unknown fields rather than ignoring them (no mass assignment)", async () => {
        const reply = await post({
          json: { name: "X", phone: nextPhone(), id: "ld_mine", account_id: other.accountId }
        })
        expect(reply.status).toBe(400)
        expect(reply.body.details.map((detail: { path: string }) => detail.path).sort()).toEqual(["account_id", "id"])
      })

      it("answers a 2 MiB body with 413", async () => {
        const reply = await post({
          raw: JSON.stringify({ name: "x".repeat(2 * 1024 * 1024), phone: nextPhone() }),
          headers: { "content-type": "application/json" }
        })
        expect(reply.status).toBe(413)
        expect(reply.body).toEqual({
          error: "The request body is over the limit of 1048576 bytes",
          code: "payload_too_large"
        })
      })

      it("answers a form-encoded body with 415", async () => {
        const reply = await post({
          raw: "name=Ada&phone=%2B14155550100",
          headers: { "content-type": "application/x-www-form-urlencoded" }
        })
        expect(reply.status).toBe(415)
        expect(reply.body).toEqual({
          error: "The request body must be application/json",
          code: "unsupported_media_type"
        })
      })

      it("refuses NUL characters anywhere in a body or an id with 400, on every store", async () => {
        const named = await post({ json: { name: "a\u0000b", phone: nextPhone() } })
        expect(named.status).toBe(400)
        expect(named.body.details).toEqual([{ path: "name", message: "must not contain NUL characters" }])
        const attributes = await post({ json: { name: "Nul", phone: nextPhone(), attributes: { k: "\u0000" } } })
        expect(attributes.status).toBe(400)
        const id = await call(target, "GET", "/api/v1/leads/ld_%00", { auth: acme.ownerKey })
        expect(id.status).toBe(400)
        expect(id.body.code).toBe("validation_error")
      })

      it("refuses attributes nested deeper than 32 levels instead of overflowing", async () => {
        let deep = "1"
        for (let i = 0; i < 5000; i++) deep = `[${deep}]`
        const reply = await post({
          raw: `{"name":"Deep","phone":"${nextPhone()}","attributes":{"a":${deep}}}`,
          headers: { "content-type": "application/json" }
        })
        expect(reply.status).toBe(400)
        expect(reply.body.details).toEqual([{ path: "attributes", message: "must not nest deeper than 32 levels" }])
      })

      it("answers a declared non-JSON type with the JSON 415 even on an empty body", async () => {
        const reply = await post({ raw: "", headers: { "content-type": "text/plain" } })
        expect(reply.status).toBe(415)
        expect(reply.body.code).toBe("unsupported_media_type")
      })

      it("refuses lone surrogates with 400, on every store", async () => {
        const reply = await post({
          raw: `{"name":"\\ud800","phone":"${nextPhone()}"}`,
          headers: { "content-type": "application/json" }
        })
        expect(reply.status).toBe(400)
        expect(reply.body.details).toEqual([
          { path: "name", message: "must be well-formed Unicode (no lone surrogates)" }
        ])
      })

      it("does not let a ';' end the path: /leads/;x is no route", async () => {
        const reply = await call(target, "GET", "/api/v1/leads/;x=1", { auth: acme.ownerKey })
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual({ error: "No such route", code: "not_found" })
      })

      it("answers headers over 16 KiB with a JSON 431", async () => {
        const reply = await call(target, "GET", "/api/me", {
          auth: acme.ownerKey,
          headers: { "x-padding": "x".repeat(20_000) }
        })
        expect(reply.status).toBe(431)
        expect(reply.body).toEqual({ error: "The request headers are too large", code: "headers_too_large" })
        expect(reply.headers.get("x-request-id")).toMatch(/^req_/)
      })

      it("answers another +json media type with the JSON 415 too", async () => {
        const reply = await post({ raw: "{}", headers: { "content-type": "application/merge-patch+json" } })
        expect(reply.status).toBe(415)
        expect(reply.body.code).toBe("unsupported_media_type")
      })

      it("answers an unknown route with a JSON 404", async () => {
        const reply = await call(target, "GET", "/api/v1/nothing-here", { auth: acme.ownerKey })
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual({ error: "No such route", code: "not_found" })
      })

      it("puts X-Request-Id on every response, success or error", async () => {
        const replies = [
          await call(target, "GET", "/api/me", { auth: acme.ownerKey }),
          await call(target, "GET", "/api/me"),
          await call(target, "GET", "/nowhere"),
          await post({ raw: "{", headers: { "content-type": "application/json" } })
        ]
        const ids = replies.map((reply) => reply.headers.get("x-request-id"))
        for (const id of ids) expect(id).toMatch(/^req_[0-9a-z]{26}$/)
        expect(new Set(ids).size).toBe(ids.length)
      })
    })

    describe("operator API", () => {
      it("refuses a wrong admin token and API keys", async () => {
        for (const auth of [undefined, "wrong", acme.ownerKey]) {
          const reply = await call(target, "POST", "/admin/v1/accounts", { auth, json: { name: "Nope" } })
          expect(reply.status).toBe(401)
          expect(reply.body.code).toBe("unauthorized")
        }
      })

      it("validates scopes and finds only existing accounts and keys", async () => {
        const badScope = await call(target, "POST", `/admin/v1/accounts/${acme.accountId}/keys`, {
          auth: target.adminToken,
          json: { scopes: ["leads:everything"] }
        })
        expect(badScope.status).toBe(400)
        expect(badScope.body.code).toBe("validation_error")
        const missing = await call(target, "POST", "/admin/v1/accounts/00000000-0000-0000-0000-000000000000/keys", {
          auth: target.adminToken,
          json: {}
        })
        expect(missing.status).toBe(404)
        expect((await call(target, "DELETE", "/admin/v1/keys/key_nope", { auth: target.adminToken })).status).toBe(404)
      })

      it("lists an account's keys without the keys themselves", async () => {
        const reply = await call(target, "GET", `/admin/v1/accounts/${acme.accountId}/keys`, {
          auth: target.adminToken
        })
        expect(reply.status).toBe(200)
        expect(reply.body.keys.length).toBeGreaterThanOrEqual(6)
        expect(reply.text).not.toContain(acme.ownerKey)
        expect(reply.body.keys.every((key: { prefix: string }) => key.prefix.startsWith("lk_"))).toBe(true)
      })
    })

    describe("typed client", () => {
      const withClient = <A, E>(apiKey: string, use: (client: Client.Client) => Effect.Effect<A, E>) =>
        Effect.runPromise(
          Client.make({ baseUrl: target.baseUrl, apiKey }).pipe(
            Effect.flatMap(use),
            Effect.provide(FetchHttpClient.layer)
          )
        )

      it("creates, reads, lists and deletes through the generated client", async () => {
        const phone = nextPhone()
        const result = await withClient(acme.ownerKey, (client) =>
          Effect.gen(function* () {
            const created = yield* client.leads.create({ payload: { name: "Typed", phone }, headers: {} })
            const fetched = yield* client.leads.get({ params: { id: created.id } })
            const page = yield* client.leads.list({ query: { limit: 1 } })
            const deleted = yield* client.leads.delete({ params: { id: created.id } })
            const me = yield* client.identity.me()
            return { created, fetched, page, deleted, me }
          })
        )
        expect(result.fetched).toEqual(result.created)
        expect(result.created.phone).toBe(phone)
        expect(result.page.meta.limit).toBe(1)
        expect(result.deleted).toEqual({ id: result.created.id, deleted: true })
        expect(result.me.account.user_id).toBe(acme.ownerUserId)
      })

      it("surfaces wire errors as typed failures", async () => {
        const failure = await withClient(acme.keys.leadsRead!.apiKey, (client) =>
          Effect.flip(client.leads.create({ payload: { name: "No", phone: nextPhone() }, headers: {} }))
        )
        expect(failure._tag).toBe("Forbidden")
        expect(failure).toMatchObject({ error: "Insufficient scope: requires leads:write", code: "forbidden" })
      })
    })
  })

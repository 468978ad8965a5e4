import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { beforeAll, describe, expect, it } from "vitest"
import * as Client from "@leadline/http-adapter/Client"
import { type AccountFixture, makeAccount, makeUser, nextPhone } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden, listAll } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import * as LeadJobsContract from "./LeadJobsContract.ts"
import * as LeadSearchContract from "./LeadSearchContract.ts"
import { LEAD_KEYS, postLead } from "./LeadsResource.ts"

/** Leads: scopes, the CRUD contract, pagination, isolation, bad input, and the typed client. */
export const contract = (context: ContractContext) => {
  const createLead = (key: string, body: Record<string, unknown> = {}, headers?: Record<string, string>) =>
    postLead(context.target, key, body, headers)

  /** Every lead id the key can list, page by page through `next_offset`. */
  const allLeadIds = async (key: string, limit: number) =>
    (await listAll(context.target, key, "/api/v1/leads", "leads", limit)).map((lead: { id: string }) => lead.id)

  describe("scopes", () => {
    it("lets leads:read list (200) and refuses DELETE with the seed's exact body", async () => {
      const lead = await createLead(context.acme.ownerKey)
      const reader = context.acme.keys.leadsRead!.apiKey
      expect((await call(context.target, "GET", "/api/v1/leads", { auth: reader })).status).toBe(200)
      const refused = await call(context.target, "DELETE", `/api/v1/leads/${lead.body.id}`, { auth: reader })
      expect(refused.status).toBe(403)
      expect(refused.text).toBe('{"error":"Insufficient scope: requires leads:write","code":"forbidden"}')
      expect((await call(context.target, "GET", `/api/v1/leads/${lead.body.id}`, { auth: reader })).status).toBe(200)
    })

    it("grants read with write, and names the narrowest scope when refusing", async () => {
      const writer = context.acme.keys.leadsWrite!.apiKey
      expect((await call(context.target, "GET", "/api/v1/leads", { auth: writer })).status).toBe(200)
      const refused = await call(context.target, "GET", "/api/v1/leads", {
        auth: context.acme.keys.conversations!.apiKey
      })
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual(forbidden("leads:read"))
      const create = await createLead(context.acme.keys.leadsRead!.apiKey)
      expect(create.status).toBe(403)
      expect(create.body).toEqual(forbidden("leads:write"))
    })
  })

  describe("leads", () => {
    it("creates a lead with a normalised phone and the contract's defaults", async () => {
      const reply = await call(context.target, "POST", "/api/v1/leads", {
        auth: context.acme.keys.leadsWrite!.apiKey,
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
      const key = context.acme.keys.leadsWrite!.apiKey
      const memberId = await makeUser(context.target, context.acme.accountId, "admin")
      const created = await createLead(key, { email: "ada@example.com", tags: ["vip"], attributes: { source: "ad" } })
      expect(created.status).toBe(201)
      const id = created.body.id

      const got = await call(context.target, "GET", `/api/v1/leads/${id}`, { auth: key })
      expect(got.status).toBe(200)
      expect(got.body).toEqual(created.body)

      const updated = await call(context.target, "PATCH", `/api/v1/leads/${id}`, {
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

      const deleted = await call(context.target, "DELETE", `/api/v1/leads/${id}`, { auth: key })
      expect(deleted.status).toBe(200)
      expect(deleted.body).toEqual({ id, deleted: true })
      const gone = await call(context.target, "GET", `/api/v1/leads/${id}`, { auth: key })
      expect(gone.status).toBe(404)
      expect(gone.body.code).toBe("not_found")
      expect((await call(context.target, "DELETE", `/api/v1/leads/${id}`, { auth: key })).status).toBe(404)
    })

    it("keeps phone numbers unique per account (409), not across accounts", async () => {
      const phone = nextPhone()
      expect((await createLead(context.acme.ownerKey, { phone })).status).toBe(201)
      const clash = await createLead(context.acme.ownerKey, { phone })
      expect(clash.status).toBe(409)
      expect(clash.body).toEqual({ error: `A lead with phone ${phone} already exists`, code: "conflict" })
      expect((await createLead(context.other.ownerKey, { phone })).status).toBe(201)

      const second = await createLead(context.acme.ownerKey)
      const moved = await call(context.target, "PATCH", `/api/v1/leads/${second.body.id}`, {
        auth: context.acme.ownerKey,
        json: { phone }
      })
      expect(moved.status).toBe(409)
      expect(moved.body.code).toBe("conflict")
    })

    it("refuses an assignee that is not a user of the account", async () => {
      const reply = await createLead(context.acme.ownerKey, { assigned_user_id: context.other.ownerUserId })
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe("validation_error")
      expect(reply.body.details).toEqual([{ path: "assigned_user_id", message: "no such user in this account" }])
    })
  })

  describe("pagination", () => {
    let fixture: AccountFixture
    let newestFirst: Array<string>

    beforeAll(async () => {
      fixture = await makeAccount(context.target, { name: "Paged" })
      const ids: Array<string> = []
      for (let i = 0; i < 5; i++) ids.push((await createLead(fixture.ownerKey, { name: `Lead ${i}` })).body.id)
      newestFirst = ids.reverse()
    })

    const list = (query: string) => call(context.target, "GET", `/api/v1/leads${query}`, { auth: fixture.ownerKey })

    it("gives meta on the first, middle, last and past-the-end pages", async () => {
      const first = await list("?limit=2")
      expect(first.status).toBe(200)
      expect(first.body.meta).toEqual({
        limit: 2,
        offset: 0,
        total: 5,
        has_more: true,
        next_offset: 2,
        next_starting_after: newestFirst[1],
        previous_ending_before: null
      })
      expect(first.body.leads.map((lead: { id: string }) => lead.id)).toEqual(newestFirst.slice(0, 2))

      const middle = await list("?limit=2&offset=2")
      expect(middle.body.meta).toEqual({
        limit: 2,
        offset: 2,
        total: 5,
        has_more: true,
        next_offset: 4,
        next_starting_after: newestFirst[3],
        previous_ending_before: newestFirst[2]
      })
      expect(middle.body.leads.map((lead: { id: string }) => lead.id)).toEqual(newestFirst.slice(2, 4))

      const last = await list("?limit=2&offset=4")
      expect(last.body.meta).toEqual({
        limit: 2,
        offset: 4,
        total: 5,
        has_more: false,
        next_offset: null,
        next_starting_after: null,
        previous_ending_before: newestFirst[4]
      })
      expect(last.body.leads).toHaveLength(1)

      const past = await list("?offset=10")
      expect(past.status).toBe(200)
      expect(past.body).toEqual({
        leads: [],
        meta: {
          limit: 50,
          offset: 10,
          total: 5,
          has_more: false,
          next_offset: null,
          next_starting_after: null,
          previous_ending_before: null
        }
      })
    })

    it("defaults to limit 50, offset 0", async () => {
      const reply = await list("")
      expect(reply.body.meta).toEqual({
        limit: 50,
        offset: 0,
        total: 5,
        has_more: false,
        next_offset: null,
        next_starting_after: null,
        previous_ending_before: null
      })
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

  describe("tenant isolation", () => {
    it("answers 404 for another account's lead on GET, PATCH and DELETE, and never lists it", async () => {
      const theirs = await createLead(context.other.ownerKey)
      const id = theirs.body.id
      for (const [method, json] of [["GET"], ["PATCH", { name: "Mine now" }], ["DELETE"]] as const) {
        const reply = await call(context.target, method, `/api/v1/leads/${id}`, { auth: context.acme.ownerKey, json })
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual({ error: `No lead with id ${id}`, code: "not_found" })
      }
      const unknown = await call(context.target, "GET", "/api/v1/leads/ld_doesnotexist", {
        auth: context.acme.ownerKey
      })
      expect(unknown.body).toEqual({ error: "No lead with id ld_doesnotexist", code: "not_found" })
      expect(await allLeadIds(context.acme.ownerKey, 100)).not.toContain(id)
      const still = await call(context.target, "GET", `/api/v1/leads/${id}`, { auth: context.other.ownerKey })
      expect(still.body.name).toBe(theirs.body.name)
    })
  })

  describe("bad input", () => {
    const post = (options: Parameters<typeof call>[3]) =>
      call(context.target, "POST", "/api/v1/leads", { auth: context.acme.ownerKey, ...options })

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
        json: { name: "X", phone: nextPhone(), id: "ld_mine", account_id: context.other.accountId }
      })
      expect(reply.status).toBe(400)
      expect(reply.body.details.map((detail: { path: string }) => detail.path).sort()).toEqual(["account_id", "id"])
    })

    it("refuses NUL characters anywhere in a body or an id with 400, on every store", async () => {
      const named = await post({ json: { name: "a\u0000b", phone: nextPhone() } })
      expect(named.status).toBe(400)
      expect(named.body.details).toEqual([{ path: "name", message: "must not contain NUL characters" }])
      const attributes = await post({ json: { name: "Nul", phone: nextPhone(), attributes: { k: "\u0000" } } })
      expect(attributes.status).toBe(400)
      const id = await call(context.target, "GET", "/api/v1/leads/ld_%00", { auth: context.acme.ownerKey })
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
      const reply = await call(context.target, "GET", "/api/v1/leads/;x=1", { auth: context.acme.ownerKey })
      expect(reply.status).toBe(404)
      expect(reply.body).toEqual({ error: "No such route", code: "not_found" })
    })
  })

  describe("typed client", () => {
    const withClient = <A, E>(apiKey: string, use: (client: Client.Client) => Effect.Effect<A, E>) =>
      Effect.runPromise(
        Client.make({ baseUrl: context.target.baseUrl, apiKey }).pipe(
          Effect.flatMap(use),
          Effect.provide(FetchHttpClient.layer)
        )
      )

    it("creates, reads, lists and deletes through the generated client", async () => {
      const phone = nextPhone()
      const result = await withClient(context.acme.ownerKey, (client) =>
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
      expect(result.me.account.user_id).toBe(context.acme.ownerUserId)
    })

    it("surfaces wire errors as typed failures", async () => {
      const failure = await withClient(context.acme.keys.leadsRead!.apiKey, (client) =>
        Effect.flip(client.leads.create({ payload: { name: "No", phone: nextPhone() }, headers: {} }))
      )
      expect(failure._tag).toBe("Forbidden")
      expect(failure).toMatchObject({ error: "Insufficient scope: requires leads:write", code: "forbidden" })
    })
  })

  LeadSearchContract.contract(context)
  LeadJobsContract.contract(context)
}

import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, makeUser, nextPhone } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden, notFound } from "../internal/wire.ts"
import type { Admits, SecurityContext, Slice } from "../Slice.ts"
import * as Leads from "./LeadsResource.ts"

/** The OWASP checks that are about leads; the runner (test/SecuritySuite.ts) places them under their item. */

const reads = ["leads:read", "leads:write", "all 16 scopes", "full access"] as const
const writes = ["leads:write", "all 16 scopes", "full access"] as const

/** The keys each leads route admits, as the contract has them: leads:read or leads:write reads, leads:write changes. */
export const admits: Admits = {
  "GET /api/v1/leads": reads,
  "POST /api/v1/leads": writes,
  "GET /api/v1/leads/{id}": reads,
  "PATCH /api/v1/leads/{id}": writes,
  "DELETE /api/v1/leads/{id}": writes,
  "POST /api/v1/leads/imports": writes,
  "POST /api/v1/leads/bulk": writes,
  "GET /api/v1/leads/jobs": reads,
  "GET /api/v1/leads/jobs/{id}": reads,
  "GET /api/v1/leads/export": reads
}

const excess = (path: string) => ({ path, message: "Expected no excess property" })

const helpers = (context: SecurityContext) => ({
  createLead: (owner: AccountFixture, fields: Record<string, unknown> = {}) =>
    Leads.createLead(context.target, owner.ownerKey, fields),
  readLead: (owner: AccountFixture, id: string) => Leads.readLead(context.target, owner.ownerKey, id)
})

export const security: Slice["security"] = {
  API1: (context) =>
    describe("leads", () => {
      // Alice owns the lead; Bob, with full access to his own account and a leads:read key, tries to reach it.
      const { createLead, readLead } = helpers(context)
      const unknownLeadId = Leads.unknownLeadId
      let alice: AccountFixture
      let bob: AccountFixture
      let aliceLead: Record<string, unknown> & { id: string }

      beforeAll(async () => {
        alice = await makeAccount(context.target, { name: "Alice Ltd" })
        bob = await makeAccount(context.target, { name: "Bob Ltd", keys: { reader: ["leads:read"] } })
        aliceLead = await readLead(alice, (await createLead(alice)).id)
      })

      const bobCalls = (method: string, path: string, json?: unknown) =>
        call(context.target, method, path, { auth: bob.ownerKey, ...(json === undefined ? {} : { json }) })

      it("checks the scope before looking the lead up, so a 403 does not reveal it either", async () => {
        const reader = bob.keys.reader!.apiKey
        const reply = await call(context.target, "DELETE", `/api/v1/leads/${aliceLead.id}`, { auth: reader })
        expect(reply.status).toBe(403)
        expect(reply.body).toEqual(forbidden("leads:write"))
        const neverReply = await call(context.target, "DELETE", `/api/v1/leads/${unknownLeadId()}`, { auth: reader })
        expect(neverReply.text).toBe(reply.text)
        expect(await readLead(alice, aliceLead.id)).toEqual(aliceLead)
      })

      it("refuses references to another account's users", async () => {
        const bobLead = await createLead(bob)
        const before = await readLead(bob, bobLead.id)
        const reply = await bobCalls("PATCH", `/api/v1/leads/${bobLead.id}`, { assigned_user_id: alice.ownerUserId })
        expect(reply.status).toBe(400)
        expect(reply.body).toEqual({
          error: "assigned_user_id is not a user of this account",
          code: "validation_error",
          details: [{ path: "assigned_user_id", message: "no such user in this account" }]
        })
        expect(await readLead(bob, bobLead.id)).toEqual(before)

        // The operator API holds the same line: a key of Alice's account cannot belong to Bob's user.
        const bobUser = await makeUser(context.target, bob.accountId, "member")
        const key = await call(context.target, "POST", `/admin/v1/accounts/${alice.accountId}/keys`, {
          auth: context.target.adminToken,
          json: { user_id: bobUser }
        })
        expect(key.status).toBe(404)
        expect(key.body).toEqual(notFound("user", bobUser))
      })
    }),

  API3: (context) =>
    describe("leads", () => {
      const { createLead, readLead } = helpers(context)
      const READ_ONLY = ["id", "account_id", "created_at", "updated_at"] as const
      let account: AccountFixture

      beforeAll(async () => {
        account = await makeAccount(context.target)
      })

      const total = async () =>
        (await call(context.target, "GET", "/api/v1/leads?limit=1", { auth: account.ownerKey })).body.meta
          .total as number
      const forged: Record<(typeof READ_ONLY)[number], string> = {
        id: "ld_00000000000000000000000000",
        account_id: "00000000-0000-4000-8000-000000000000",
        created_at: "2000-01-01T00:00:00.000Z",
        updated_at: "2000-01-01T00:00:00.000Z"
      }

      it.each(READ_ONLY)("refuses %s in a create body and creates nothing", async (field) => {
        const before = await total()
        const reply = await call(context.target, "POST", "/api/v1/leads", {
          auth: account.ownerKey,
          json: { name: "Mass Assigned", phone: nextPhone(), [field]: forged[field] }
        })
        expect(reply.status).toBe(400)
        expect(reply.body).toEqual({
          error: `Invalid request body: ${field}: Expected no excess property`,
          code: "validation_error",
          details: [excess(field)]
        })
        expect(await total()).toBe(before)
      })

      it.each(READ_ONLY)("refuses %s in a PATCH body and leaves the lead as it was", async (field) => {
        const lead = await createLead(account)
        const before = await readLead(account, lead.id)
        const reply = await call(context.target, "PATCH", `/api/v1/leads/${lead.id}`, {
          auth: account.ownerKey,
          json: { name: "Renamed", [field]: forged[field] }
        })
        expect(reply.status).toBe(400)
        expect(reply.body.details).toEqual([excess(field)])
        expect(await readLead(account, lead.id)).toEqual(before)
      })

      it("names every read-only field at once, on create and on PATCH", async () => {
        const lead = await createLead(account)
        const before = await readLead(account, lead.id)
        for (const [method, path] of [
          ["POST", "/api/v1/leads"],
          ["PATCH", `/api/v1/leads/${lead.id}`]
        ] as const) {
          const reply = await call(context.target, method, path, {
            auth: account.ownerKey,
            json: { name: "All At Once", phone: nextPhone(), ...forged }
          })
          expect(reply.status, method).toBe(400)
          expect(reply.body.code).toBe("validation_error")
          expect([...reply.body.details].sort((a, b) => a.path.localeCompare(b.path))).toEqual(
            [...READ_ONLY].sort().map(excess)
          )
        }
        expect(await readLead(account, lead.id)).toEqual(before)
      })

      it("answers a lead with exactly the contract's fields: no account id or other internals", async () => {
        const lead = await createLead(account, { tags: ["vip"], attributes: { plan: "gold" } })
        expect(Object.keys(lead).sort()).toEqual(Leads.LEAD_KEYS)
        expect(Object.keys(await readLead(account, lead.id)).sort()).toEqual(Leads.LEAD_KEYS)
        const list = await call(context.target, "GET", "/api/v1/leads", { auth: account.ownerKey })
        for (const listed of list.body.leads) expect(Object.keys(listed).sort()).toEqual(Leads.LEAD_KEYS)
      })
    }),

  API4: (context) =>
    describe("leads", () => {
      const { createLead, readLead } = helpers(context)
      let account: AccountFixture

      beforeAll(async () => {
        account = await makeAccount(context.target)
      })

      /** Attributes that serialise to exactly `bytes` bytes of JSON. */
      const attributesOf = (bytes: number) => ({ a: "x".repeat(bytes - JSON.stringify({ a: "" }).length) })

      it("takes attributes of 16 KiB and refuses 16 KiB + 1 byte, on create and on PATCH", async () => {
        const lead = await createLead(account, { attributes: attributesOf(16 * 1024) })
        const before = await readLead(account, lead.id)
        const refusal = {
          error: "Invalid request body: attributes: attributes must be at most 16 KiB of JSON",
          code: "validation_error",
          details: [{ path: "attributes", message: "attributes must be at most 16 KiB of JSON" }]
        }
        const created = await call(context.target, "POST", "/api/v1/leads", {
          auth: account.ownerKey,
          json: { name: "Too Much", phone: nextPhone(), attributes: attributesOf(16 * 1024 + 1) }
        })
        expect(created.status).toBe(400)
        expect(created.body).toEqual(refusal)
        const patched = await call(context.target, "PATCH", `/api/v1/leads/${lead.id}`, {
          auth: account.ownerKey,
          json: { attributes: attributesOf(16 * 1024 + 1) }
        })
        expect(patched.status).toBe(400)
        expect(patched.body).toEqual(refusal)
        expect(await readLead(account, lead.id)).toEqual(before)
      })

      it.each([
        ["51 tags", { tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, "tags", "at most 50 tags"],
        ["a 65-character tag", { tags: ["x".repeat(65)] }, "tags.0", "a tag must be at most 64 characters"],
        ["a 201-character name", { name: "x".repeat(201) }, "name", "name must be at most 200 characters"],
        [
          "a 255-character email",
          { email: `${"a".repeat(243)}@example.com` },
          "email",
          "email must be at most 254 characters"
        ]
      ])("refuses %s", async (_, fields, path, message) => {
        const reply = await call(context.target, "POST", "/api/v1/leads", {
          auth: account.ownerKey,
          json: { name: "Limits", phone: nextPhone(), ...fields }
        })
        expect(reply.status).toBe(400)
        expect(reply.body).toEqual({
          error: `Invalid request body: ${path}: ${message}`,
          code: "validation_error",
          details: [{ path, message }]
        })
      })

      it("takes exactly 50 tags of 64 characters", async () => {
        const tags = Array.from({ length: 50 }, (_, i) => `${i}`.padStart(64, "t"))
        const lead = await createLead(account, { tags })
        expect((await readLead(account, lead.id)).tags).toEqual(tags)
      })
    })
}

import { describe, expect, it } from "vitest"
import { makeAccount, makeKey, makeUser } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"

/** Every permission of docs/contract.md, sorted: what GET /api/me lists for a full-access key. */
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

/** GET /api/me and GET /api/usage. */
export const contract = (context: ContractContext) => {
  describe("GET /api/me", () => {
    it("describes a full-access key: no scopes, every permission", async () => {
      const reply = await call(context.target, "GET", "/api/me", { auth: context.acme.ownerKey })
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({
        account: {
          user_id: context.acme.ownerUserId,
          owner_user_id: context.acme.ownerUserId,
          role: "owner",
          is_owner: true,
          auth_type: "api_key"
        },
        scopes: [],
        permissions: ALL_PERMISSIONS
      })
    })

    it("lists a scoped key's scopes as given and the union of their permissions, sorted", async () => {
      const reply = await call(context.target, "GET", "/api/me", { auth: context.acme.keys.mixed!.apiKey })
      expect(reply.status).toBe(200)
      expect(reply.body.scopes).toEqual(["leads:read", "analytics:read"])
      expect(reply.body.permissions).toEqual(["analytics.view", "leads.view"])
      const writer = await call(context.target, "GET", "/api/me", { auth: context.acme.keys.leadsWrite!.apiKey })
      expect(writer.body.permissions).toEqual([
        "leads.assign",
        "leads.create",
        "leads.delete",
        "leads.update",
        "leads.view"
      ])
    })

    it("describes a member user's key", async () => {
      const memberId = await makeUser(context.target, context.acme.accountId, "member")
      const key = await makeKey(context.target, context.acme.accountId, { userId: memberId, scopes: ["leads:read"] })
      const reply = await call(context.target, "GET", "/api/me", { auth: key.apiKey })
      expect(reply.status).toBe(200)
      expect(reply.body.account).toEqual({
        user_id: memberId,
        owner_user_id: context.acme.ownerUserId,
        role: "member",
        is_owner: false,
        auth_type: "api_key"
      })
    })
  })

  describe("GET /api/usage", () => {
    it("reports the plan's limit and this month's use to analytics:read", async () => {
      const pro = await makeAccount(context.target, { plan: "pro", keys: { analytics: ["analytics:read"] } })
      const reply = await call(context.target, "GET", "/api/usage", { auth: pro.keys.analytics!.apiKey })
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({
        usage: { messages_used: 0, messages_limit: 10000 },
        subscription: { plan_id: "pro", status: "active" }
      })
      const free = await call(context.target, "GET", "/api/usage", { auth: context.acme.ownerKey })
      expect(free.body.usage.messages_limit).toBe(1000)
      expect(free.body.subscription.plan_id).toBe("free")
    })

    it("refuses a key without analytics:read with the exact 403 body", async () => {
      const reply = await call(context.target, "GET", "/api/usage", { auth: context.acme.keys.leadsRead!.apiKey })
      expect(reply.status).toBe(403)
      expect(reply.text).toBe(JSON.stringify(forbidden("analytics:read")))
    })
  })
}

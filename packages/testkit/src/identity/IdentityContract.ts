import { Effect } from "effect"
import { HttpApi } from "effect/http-api"
import * as Client from "@leadline/http-adapter/Client"
import { IdentityApi } from "@leadline/http-adapter/identity/IdentityApi"
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

/** GET /api/me, GET /api/usage and GET /api/users. */
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

  describe("GET /api/users", () => {
    it("lists the account's users oldest first, the owner leading, to any of its keys", async () => {
      const team = await makeAccount(context.target, { name: "Team Ltd", keys: { scoped: ["orders:read"] } })
      const memberId = await makeUser(context.target, team.accountId, "member")
      const adminId = await makeUser(context.target, team.accountId, "admin")
      const detail = await call(context.target, "GET", `/admin/v1/accounts/${team.accountId}`, {
        auth: context.target.adminToken
      })
      // The same users, in the same order and form, as the operator's account detail shows them.
      expect(detail.body.users.map((user: { id: string }) => user.id)).toEqual([team.ownerUserId, memberId, adminId])
      const all = await call(context.target, "GET", "/api/users", { auth: team.ownerKey })
      expect(all.status, all.text).toBe(200)
      expect(all.body).toEqual({
        users: detail.body.users,
        meta: { limit: 50, offset: 0, total: 3, has_more: false, next_offset: null }
      })
      expect(all.body.users.map((user: { role: string }) => user.role)).toEqual(["owner", "member", "admin"])
      // A key of any scope reads the same list, and so does a member's own key.
      const scoped = await call(context.target, "GET", "/api/users", { auth: team.keys.scoped!.apiKey })
      expect(scoped.body).toEqual(all.body)
      const member = await makeKey(context.target, team.accountId, { userId: memberId, scopes: ["leads:read"] })
      expect((await call(context.target, "GET", "/api/users", { auth: member.apiKey })).body).toEqual(all.body)
    })

    it("pages with limit and offset", async () => {
      const team = await makeAccount(context.target, { name: "Paged Ltd" })
      const memberId = await makeUser(context.target, team.accountId, "member")
      const adminId = await makeUser(context.target, team.accountId, "admin")
      const first = await call(context.target, "GET", "/api/users?limit=2", { auth: team.ownerKey })
      expect(first.body.users.map((user: { id: string }) => user.id)).toEqual([team.ownerUserId, memberId])
      expect(first.body.meta).toEqual({ limit: 2, offset: 0, total: 3, has_more: true, next_offset: 2 })
      const second = await call(context.target, "GET", "/api/users?limit=2&offset=2", { auth: team.ownerKey })
      expect(second.body.users.map((user: { id: string }) => user.id)).toEqual([adminId])
      expect(second.body.meta).toEqual({ limit: 2, offset: 2, total: 3, has_more: false, next_offset: null })
      const refused = await call(context.target, "GET", "/api/users?limit=0", { auth: team.ownerKey })
      expect(refused.status).toBe(400)
      expect(refused.body.code).toBe("validation_error")
    })

    it("answers a typed client of the identity group alone, as the dashboard's pages make theirs", async () => {
      const team = await makeAccount(context.target, { name: "Typed Ltd" })
      const memberId = await makeUser(context.target, team.accountId, "member")
      const api = HttpApi.make("identity-only").add(IdentityApi)
      const { me, users } = await Effect.runPromise(
        Effect.gen(function* () {
          const client = yield* Client.makeFor(api, { baseUrl: context.target.baseUrl, apiKey: team.ownerKey })
          const me = yield* client.identity.me()
          const users = yield* client.identity.users({ query: { limit: 1, offset: 1 } })
          return { me, users }
        })
      )
      expect(me.account.user_id).toBe(team.ownerUserId)
      expect(users.users.map((user) => [user.id, user.role])).toEqual([[memberId, "member"]])
      expect(users.meta).toEqual({ limit: 1, offset: 1, total: 2, has_more: false, next_offset: null })
    })
  })
}

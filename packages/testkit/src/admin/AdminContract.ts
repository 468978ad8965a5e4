import { describe, expect, it } from "vitest"
import { TEMPLATE_SEND, makeConversation } from "../conversations/ConversationsResource.ts"
import { makeAccount, makeUser } from "../Fixtures.ts"
import { call } from "../Http.ts"
import type { ContractContext } from "../Slice.ts"

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** The fields of an account in the operator's listing, in the order the server writes them. */
const ACCOUNT_FIELDS = ["id", "name", "plan_id", "subscription_status", "owner_user_id", "created_at"]

interface Dated {
  readonly id: string
  readonly created_at: string
}

/** `created_at`, then `id`, ascending; the listing of accounts is this reversed. */
const oldestFirst = <A extends Dated>(items: ReadonlyArray<A>): Array<A> =>
  items.toSorted((a, b) =>
    a.created_at !== b.created_at ? (a.created_at < b.created_at ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  )

/** The operator API: its token, its validation, its listing of keys. */
export const contract = (context: ContractContext) => {
  describe("operator API", () => {
    it("refuses a wrong admin token and API keys", async () => {
      for (const auth of [undefined, "wrong", context.acme.ownerKey]) {
        const reply = await call(context.target, "POST", "/admin/v1/accounts", { auth, json: { name: "Nope" } })
        expect(reply.status).toBe(401)
        expect(reply.body.code).toBe("unauthorized")
      }
    })

    it("validates scopes and finds only existing accounts and keys", async () => {
      const badScope = await call(context.target, "POST", `/admin/v1/accounts/${context.acme.accountId}/keys`, {
        auth: context.target.adminToken,
        json: { scopes: ["leads:everything"] }
      })
      expect(badScope.status).toBe(400)
      expect(badScope.body.code).toBe("validation_error")
      const missing = await call(
        context.target,
        "POST",
        "/admin/v1/accounts/00000000-0000-0000-0000-000000000000/keys",
        {
          auth: context.target.adminToken,
          json: {}
        }
      )
      expect(missing.status).toBe(404)
      expect(
        (await call(context.target, "DELETE", "/admin/v1/keys/key_nope", { auth: context.target.adminToken })).status
      ).toBe(404)
    })

    const admin = (method: string, path: string, json?: unknown) =>
      call(context.target, method, path, { auth: context.target.adminToken, ...(json === undefined ? {} : { json }) })

    it("lists accounts newest first with their plans and owners, paged", async () => {
      const first = await makeAccount(context.target, { name: "Listed first" })
      // A later millisecond: accounts made in the same one are listed by id (the in-memory wiring is that fast).
      await new Promise((resolve) => setTimeout(resolve, 2))
      const second = await makeAccount(context.target, { name: "Listed second", plan: "pro" })
      expect((await admin("PATCH", `/admin/v1/accounts/${first.accountId}`, { plan_id: "scale" })).status).toBe(200)

      const reply = await admin("GET", "/admin/v1/accounts?limit=100")
      expect(reply.status, reply.text).toBe(200)
      const listed: ReadonlyArray<Dated & Record<string, unknown>> = reply.body.accounts
      const total: number = reply.body.meta.total
      expect(total).toBeGreaterThanOrEqual(2)
      expect(reply.body.meta).toEqual({
        limit: 100,
        offset: 0,
        total,
        has_more: total > 100,
        next_offset: total > 100 ? 100 : null
      })
      expect(listed).toHaveLength(Math.min(total, 100))
      expect(listed).toEqual(oldestFirst(listed).reverse())
      for (const account of listed) expect(Object.keys(account)).toEqual(ACCOUNT_FIELDS)
      const shown = (id: string) => listed.find((account) => account.id === id)
      expect(shown(second.accountId)).toEqual({
        id: second.accountId,
        name: "Listed second",
        plan_id: "pro",
        subscription_status: "active",
        owner_user_id: second.ownerUserId,
        created_at: expect.stringMatching(ISO)
      })
      expect(shown(first.accountId)).toEqual({
        id: first.accountId,
        name: "Listed first",
        plan_id: "scale",
        subscription_status: "active",
        owner_user_id: first.ownerUserId,
        created_at: expect.stringMatching(ISO)
      })
      // Made later, listed earlier.
      expect(listed.indexOf(shown(second.accountId)!)).toBeLessThan(listed.indexOf(shown(first.accountId)!))
      for (const key of [first.ownerKey, second.ownerKey]) expect(reply.text).not.toContain(key)

      const page = await admin("GET", "/admin/v1/accounts?limit=1&offset=1")
      expect(page.body).toEqual({
        accounts: [listed[1]],
        meta: { limit: 1, offset: 1, total, has_more: total > 2, next_offset: total > 2 ? 2 : null }
      })
      const past = await admin("GET", `/admin/v1/accounts?offset=${total}`)
      expect(past.body).toEqual({
        accounts: [],
        meta: { limit: 50, offset: total, total, has_more: false, next_offset: null }
      })
      const bad = await admin("GET", "/admin/v1/accounts?limit=0")
      expect(bad.status).toBe(400)
      expect(bad.body).toEqual({
        error: "Invalid request query: limit: limit must be an integer from 1 to 100",
        code: "validation_error",
        details: [{ path: "limit", message: "limit must be an integer from 1 to 100" }]
      })
    })

    it("shows an account with its users, oldest first, and this month's usage as /api/usage has it", async () => {
      const account = await makeAccount(context.target, { name: "Detailed" })
      const adminId = await makeUser(context.target, account.accountId, "admin")
      const memberId = await makeUser(context.target, account.accountId, "member")
      const { conversation } = await makeConversation(context.target, account.ownerKey)
      const sent = await call(context.target, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: account.ownerKey,
        json: TEMPLATE_SEND
      })
      expect(sent.status, sent.text).toBe(201)

      const summary = (await admin("GET", "/admin/v1/accounts?limit=100")).body.accounts.find(
        (listed: Dated) => listed.id === account.accountId
      )
      const reply = await admin("GET", `/admin/v1/accounts/${account.accountId}`)
      expect(reply.status, reply.text).toBe(200)
      expect(Object.keys(reply.body)).toEqual([...ACCOUNT_FIELDS, "users", "usage"])
      const users: ReadonlyArray<Dated & { role: string }> = reply.body.users
      expect(users).toEqual(oldestFirst(users))
      expect(reply.body).toEqual({
        ...summary,
        users: oldestFirst([
          // The owner is made with the account, in the same instant.
          { id: account.ownerUserId, role: "owner", created_at: summary.created_at },
          { id: adminId, role: "admin", created_at: users.find((user) => user.id === adminId)?.created_at ?? "" },
          { id: memberId, role: "member", created_at: users.find((user) => user.id === memberId)?.created_at ?? "" }
        ]),
        usage: { messages_used: 1, messages_limit: 1000 }
      })
      for (const user of users) expect(user.created_at).toMatch(ISO)
      // The owner is the oldest; a user added in the same millisecond ties with it, and ties go by id.
      const owner = users.find((user) => user.id === account.ownerUserId)
      for (const user of users) expect(owner!.created_at <= user.created_at, user.id).toBe(true)
      const usage = await call(context.target, "GET", "/api/usage", { auth: account.ownerKey })
      expect(reply.body.usage).toEqual(usage.body.usage)

      // A plan change shows at once, in the limit too.
      expect((await admin("PATCH", `/admin/v1/accounts/${account.accountId}`, { plan_id: "pro" })).status).toBe(200)
      const moved = await admin("GET", `/admin/v1/accounts/${account.accountId}`)
      expect(moved.body).toMatchObject({ plan_id: "pro", usage: { messages_used: 1, messages_limit: 10000 } })
    })

    it("answers 404 for an account that does not exist", async () => {
      for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
        const reply = await admin("GET", `/admin/v1/accounts/${id}`)
        expect(reply.status).toBe(404)
        expect(reply.text).toBe(JSON.stringify({ error: `No account with id ${id}`, code: "not_found" }))
      }
    })

    it("lists an account's keys without the keys themselves", async () => {
      const reply = await call(context.target, "GET", `/admin/v1/accounts/${context.acme.accountId}/keys`, {
        auth: context.target.adminToken
      })
      expect(reply.status).toBe(200)
      expect(reply.body.keys.length).toBeGreaterThanOrEqual(6)
      expect(reply.text).not.toContain(context.acme.ownerKey)
      expect(reply.body.keys.every((key: { prefix: string }) => key.prefix.startsWith("lk_"))).toBe(true)
    })
  })
}

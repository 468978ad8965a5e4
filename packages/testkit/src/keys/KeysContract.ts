import { SCOPES } from "@leadline/core/auth/Scopes"
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { describe, expect, it } from "vitest"
import * as Client from "@leadline/http-adapter/Client"
import { type AccountFixture, makeAccount, makeKey, makeUser } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden, listAll, UNAUTHORIZED } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import * as Keys from "./KeysResource.ts"

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const FULL_ACCESS_ONLY = JSON.stringify(forbidden("full access"))

/** The order `GET /api/keys` promises: `created_at` desc, then `id` desc. */
const newestFirst = (keys: ReadonlyArray<Keys.KeySummary>) =>
  keys.toSorted((a, b) =>
    a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0
  )

/** `/api/keys`: an account's own API keys, managed with one of its full-access keys. */
export const contract = (context: ContractContext) => {
  const me = async (key: string) => {
    const reply = await call(context.target, "GET", "/api/me", { auth: key })
    expect(reply.status, reply.text).toBe(200)
    return reply.body
  }
  /** The account's keys as the operator lists them: the owner's key, made with the account, first. */
  const operatorListing = async (account: AccountFixture): Promise<ReadonlyArray<Keys.KeySummary>> => {
    const reply = await call(context.target, "GET", `/admin/v1/accounts/${account.accountId}/keys`, {
      auth: context.target.adminToken
    })
    expect(reply.status, reply.text).toBe(200)
    return reply.body.keys
  }

  describe("api keys", () => {
    it("issues a key of the calling key's user, with the key shown in this answer only", async () => {
      const account = await makeAccount(context.target, { name: "Key maker" })
      const reply = await Keys.postKey(context.target, account.ownerKey, {
        name: "dashboard",
        scopes: ["leads:read", "analytics:read"]
      })
      expect(reply.status, reply.text).toBe(201)
      expect(Object.keys(reply.body)).toEqual([...Keys.SUMMARY_FIELDS, "api_key"])
      expect(reply.body).toEqual({
        id: expect.stringMatching(/^key_[0-9a-z]{26}$/),
        name: "dashboard",
        user_id: account.ownerUserId,
        prefix: reply.body.api_key.slice(0, 9),
        scopes: ["leads:read", "analytics:read"],
        created_at: expect.stringMatching(ISO),
        revoked_at: null,
        api_key: expect.stringMatching(/^lk_[A-Za-z0-9_-]{43}$/)
      })
      expect(reply.headers.get("idempotent-replayed")).toBeNull()
      // The new key is a credential of its own, with exactly the scopes asked for.
      expect(await me(reply.body.api_key)).toEqual({
        account: {
          user_id: account.ownerUserId,
          owner_user_id: account.ownerUserId,
          role: "owner",
          is_owner: true,
          auth_type: "api_key"
        },
        scopes: ["leads:read", "analytics:read"],
        permissions: ["analytics.view", "leads.view"]
      })
      // The operator sees the same key.
      expect((await operatorListing(account)).find((key) => key.id === reply.body.id)).toEqual(
        Keys.summaryOf(reply.body)
      )
    })

    it("issues a full-access key with an empty name when the body names neither", async () => {
      const account = await makeAccount(context.target)
      const created = await Keys.createKey(context.target, account.ownerKey)
      expect(created).toMatchObject({ name: "", scopes: [], revoked_at: null })
      const described = await me(created.api_key)
      expect(described.scopes).toEqual([])
      expect(described.permissions).toEqual((await me(account.ownerKey)).permissions)
    })

    it("gives the key to the user whose key asked, a member's included", async () => {
      const memberId = await makeUser(context.target, context.acme.accountId, "member")
      const memberKey = await makeKey(context.target, context.acme.accountId, { userId: memberId })
      const created = await Keys.createKey(context.target, memberKey.apiKey, { scopes: ["leads:read"] })
      expect(created.user_id).toBe(memberId)
      expect((await me(created.api_key)).account).toEqual({
        user_id: memberId,
        owner_user_id: context.acme.ownerUserId,
        role: "member",
        is_owner: false,
        auth_type: "api_key"
      })
    })

    it("refuses unknown or repeated scopes, unknown fields and long names with 400, and issues nothing", async () => {
      const account = await makeAccount(context.target)
      const before = await Keys.keysListed(context.target, account.ownerKey)
      const refused = async (body: unknown) => {
        const reply = await Keys.postKey(context.target, account.ownerKey, body)
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        return reply.body
      }
      expect(await refused({ scopes: ["leads:everything"] })).toMatchObject({
        details: [{ path: "scopes.0", message: expect.any(String) }]
      })
      expect(await refused({ scopes: ["leads:read", "leads:read"] })).toEqual({
        error: "Invalid request body: scopes: scopes must be distinct",
        code: "validation_error",
        details: [{ path: "scopes", message: "scopes must be distinct" }]
      })
      expect(await refused({ name: "k", user_id: account.ownerUserId })).toEqual({
        error: "Invalid request body: user_id: Expected no excess property",
        code: "validation_error",
        details: [{ path: "user_id", message: "Expected no excess property" }]
      })
      expect(await refused({ name: "x".repeat(201) })).toMatchObject({
        details: [{ path: "name", message: "name must be at most 200 characters" }]
      })
      expect(await refused({ scopes: "leads:read" })).toMatchObject({ details: [{ path: "scopes" }] })
      expect(await Keys.keysListed(context.target, account.ownerKey)).toEqual(before)
    })

    it("lists the account's keys newest first, revoked ones with revoked_at, never a key or hash", async () => {
      const account = await makeAccount(context.target, { name: "Listed" })
      const [owner] = await operatorListing(account)
      expect(owner).toEqual({
        id: expect.stringMatching(/^key_/),
        name: "owner key",
        user_id: account.ownerUserId,
        prefix: account.ownerKey.slice(0, 9),
        scopes: [],
        created_at: expect.stringMatching(ISO),
        revoked_at: null
      })
      const first = await Keys.createKey(context.target, account.ownerKey, { name: "first", scopes: ["leads:read"] })
      const second = await Keys.createKey(context.target, account.ownerKey, { name: "second" })
      expect((await Keys.revokeKey(context.target, account.ownerKey, first.id)).status).toBe(200)

      const reply = await call(context.target, "GET", "/api/keys", { auth: account.ownerKey })
      expect(reply.status, reply.text).toBe(200)
      const revokedAt = reply.body.keys.find((key: Keys.KeySummary) => key.id === first.id)?.revoked_at
      expect(revokedAt).toMatch(ISO)
      expect(revokedAt >= first.created_at).toBe(true)
      expect(reply.body).toEqual({
        keys: newestFirst([owner!, { ...Keys.summaryOf(first), revoked_at: revokedAt }, Keys.summaryOf(second)]),
        meta: { limit: 50, offset: 0, total: 3, has_more: false, next_offset: null }
      })
      for (const key of reply.body.keys) expect(Object.keys(key)).toEqual(Keys.SUMMARY_FIELDS)
      for (const secret of [account.ownerKey, first.api_key, second.api_key]) expect(reply.text).not.toContain(secret)
      expect(reply.text).not.toContain('"api_key"')
      expect(reply.text).not.toContain('"hash"')
    })

    it("pages with limit and offset like every list, and refuses a bad page with 400", async () => {
      const account = await makeAccount(context.target, { name: "Paged" })
      for (let n = 0; n < 4; n++) await Keys.createKey(context.target, account.ownerKey, { name: `key ${n}` })
      const page = (query: string) => call(context.target, "GET", `/api/keys${query}`, { auth: account.ownerKey })

      const whole = await page("?limit=100")
      expect(whole.body.keys).toHaveLength(5)
      expect(whole.body.keys).toEqual(newestFirst(whole.body.keys))
      const first = await page("?limit=2")
      expect(first.body).toEqual({
        keys: whole.body.keys.slice(0, 2),
        meta: { limit: 2, offset: 0, total: 5, has_more: true, next_offset: 2 }
      })
      const last = await page("?limit=2&offset=4")
      expect(last.body).toEqual({
        keys: whole.body.keys.slice(4),
        meta: { limit: 2, offset: 4, total: 5, has_more: false, next_offset: null }
      })
      const past = await page("?offset=10")
      expect(past.body).toEqual({
        keys: [],
        meta: { limit: 50, offset: 10, total: 5, has_more: false, next_offset: null }
      })
      expect(await listAll(context.target, account.ownerKey, "/api/keys", "keys", 2)).toEqual(whole.body.keys)

      for (const [query, path] of [
        ["?limit=0", "limit"],
        ["?limit=101", "limit"],
        ["?limit=1.5", "limit"],
        ["?limit=ten", "limit"],
        ["?offset=-1", "offset"]
      ] as const) {
        const reply = await page(query)
        expect(reply.status, `${query}: ${reply.text}`).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details.map((detail: { path: string }) => detail.path)).toEqual([path])
      }
      const bad = await page("?limit=101")
      expect(bad.body).toEqual({
        error: "Invalid request query: limit: limit must be an integer from 1 to 100",
        code: "validation_error",
        details: [{ path: "limit", message: "limit must be an integer from 1 to 100" }]
      })
    })

    it("changes a key's scopes from its next request on", async () => {
      const account = await makeAccount(context.target)
      const key = await Keys.createKey(context.target, account.ownerKey, { name: "changing", scopes: ["leads:read"] })
      expect((await me(key.api_key)).scopes).toEqual(["leads:read"])
      expect((await call(context.target, "GET", "/api/usage", { auth: key.api_key })).status).toBe(403)

      const patched = await call(context.target, "PATCH", `/api/keys/${key.id}`, {
        auth: account.ownerKey,
        json: { scopes: ["analytics:read", "leads:write"] }
      })
      expect(patched.status, patched.text).toBe(200)
      expect(patched.text).toBe(JSON.stringify({ ...Keys.summaryOf(key), scopes: ["analytics:read", "leads:write"] }))
      const after = await me(key.api_key)
      expect(after.scopes).toEqual(["analytics:read", "leads:write"])
      expect(after.permissions).toEqual([
        "analytics.view",
        "leads.assign",
        "leads.create",
        "leads.delete",
        "leads.update",
        "leads.view"
      ])
      expect((await call(context.target, "GET", "/api/usage", { auth: key.api_key })).status).toBe(200)

      // No scopes: full access, from the next request on too.
      const widened = await call(context.target, "PATCH", `/api/keys/${key.id}`, {
        auth: account.ownerKey,
        json: { scopes: [] }
      })
      expect(widened.body.scopes).toEqual([])
      expect((await call(context.target, "GET", "/api/keys", { auth: key.api_key })).status).toBe(200)
      expect((await Keys.keysListed(context.target, account.ownerKey)).find((k) => k.id === key.id)).toEqual({
        ...Keys.summaryOf(key),
        scopes: []
      })
    })

    it("answers a PATCH of a revoked key 409, and of an unknown key 404, changing nothing", async () => {
      const account = await makeAccount(context.target)
      const key = await Keys.createKey(context.target, account.ownerKey, { scopes: ["leads:read"] })
      expect((await Keys.revokeKey(context.target, account.ownerKey, key.id)).status).toBe(200)
      const before = await Keys.keysListed(context.target, account.ownerKey)

      const conflict = await call(context.target, "PATCH", `/api/keys/${key.id}`, {
        auth: account.ownerKey,
        json: { scopes: [] }
      })
      expect(conflict.status).toBe(409)
      expect(conflict.text).toBe(JSON.stringify({ error: `API key ${key.id} is revoked`, code: "conflict" }))

      const unknown = Keys.unknownKeyId()
      const missing = await call(context.target, "PATCH", `/api/keys/${unknown}`, {
        auth: account.ownerKey,
        json: { scopes: [] }
      })
      expect(missing.status).toBe(404)
      expect(missing.text).toBe(JSON.stringify({ error: `No api key with id ${unknown}`, code: "not_found" }))
      const missingDelete = await Keys.revokeKey(context.target, account.ownerKey, unknown)
      expect(missingDelete.text).toBe(missing.text)

      expect(await Keys.keysListed(context.target, account.ownerKey)).toEqual(before)
      expect((await call(context.target, "GET", "/api/me", { auth: key.api_key })).status).toBe(401)
    })

    it("revokes a key: 401 from its next request on, and the same answer for a revoked key", async () => {
      const account = await makeAccount(context.target)
      const key = await Keys.createKey(context.target, account.ownerKey, { name: "to revoke" })
      expect((await me(key.api_key)).scopes).toEqual([])

      const revoked = await Keys.revokeKey(context.target, account.ownerKey, key.id)
      expect(revoked.status).toBe(200)
      expect(revoked.text).toBe(JSON.stringify({ id: key.id, revoked: true }))
      const again = await Keys.revokeKey(context.target, account.ownerKey, key.id)
      expect(again.status).toBe(200)
      expect(again.text).toBe(revoked.text)

      const refused = await call(context.target, "GET", "/api/me", { auth: key.api_key })
      expect(refused.status).toBe(401)
      expect(refused.body).toEqual(UNAUTHORIZED)
      const listed = (await Keys.keysListed(context.target, account.ownerKey)).find((k) => k.id === key.id)
      expect(listed).toEqual({ ...Keys.summaryOf(key), revoked_at: expect.stringMatching(ISO) })
      // The second revocation kept the first time.
      expect((await operatorListing(account)).find((k) => k.id === key.id)?.revoked_at).toBe(listed?.revoked_at)
    })

    it("lets a full-access key revoke itself", async () => {
      const account = await makeAccount(context.target)
      const key = await Keys.createKey(context.target, account.ownerKey, { name: "self" })
      const reply = await Keys.revokeKey(context.target, key.api_key, key.id)
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({ id: key.id, revoked: true })
      const next = await call(context.target, "GET", "/api/keys", { auth: key.api_key })
      expect(next.status).toBe(401)
      expect(next.body).toEqual(UNAUTHORIZED)
      expect((await me(account.ownerKey)).scopes).toEqual([])
    })

    it("refuses every route to a scoped key with the exact 403, before looking anything up", async () => {
      const target = await Keys.createKey(context.target, context.acme.ownerKey, {
        name: "target",
        scopes: ["leads:read"]
      })
      const all16 = await makeKey(context.target, context.acme.accountId, { name: "all 16 scopes", scopes: SCOPES })
      const listing = async () =>
        (await Keys.keysListed(context.target, context.acme.ownerKey)).find((key) => key.id === target.id)
      const before = await listing()
      for (const scoped of [context.acme.keys.mixed!.apiKey, context.acme.keys.leadsWrite!.apiKey, all16.apiKey]) {
        const replies = [
          await call(context.target, "GET", "/api/keys", { auth: scoped }),
          await Keys.postKey(context.target, scoped, { name: "refused" }),
          await call(context.target, "PATCH", `/api/keys/${target.id}`, { auth: scoped, json: { scopes: [] } }),
          await call(context.target, "PATCH", `/api/keys/${Keys.unknownKeyId()}`, {
            auth: scoped,
            json: { scopes: [] }
          }),
          await Keys.revokeKey(context.target, scoped, target.id),
          await Keys.revokeKey(context.target, scoped, Keys.unknownKeyId())
        ]
        for (const reply of replies) {
          expect(reply.status).toBe(403)
          expect(reply.text).toBe(FULL_ACCESS_ONLY)
        }
      }
      expect(await listing()).toEqual(before)
      expect((await me(target.api_key)).scopes).toEqual(["leads:read"])
    })

    it("replays an idempotent create with api_key null, and keeps no key", async () => {
      const account = await makeAccount(context.target)
      const headers = { "idempotency-key": `issue-${crypto.randomUUID()}` }
      const body = { name: "retried", scopes: ["leads:read"] }
      const first = await Keys.postKey(context.target, account.ownerKey, body, headers)
      expect(first.status, first.text).toBe(201)
      expect(first.headers.get("idempotent-replayed")).toBeNull()
      expect(first.body.api_key).toMatch(/^lk_[A-Za-z0-9_-]{43}$/)

      const replay = await Keys.postKey(context.target, account.ownerKey, body, headers)
      expect(replay.status).toBe(201)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.text).toBe(JSON.stringify({ ...first.body, api_key: null }))
      // What the record keeps is what a replay answers: no key.
      expect(replay.text).not.toContain(first.body.api_key)

      // It ran once, and the key of the first answer is the one issued.
      const named = (await Keys.keysListed(context.target, account.ownerKey)).filter((key) => key.name === "retried")
      expect(named).toEqual([Keys.summaryOf(first.body)])
      expect((await me(first.body.api_key)).scopes).toEqual(["leads:read"])

      const reused = await Keys.postKey(context.target, account.ownerKey, { ...body, name: "other" }, headers)
      expect(reused.status).toBe(422)
      expect(reused.body.code).toBe("idempotency_key_reused")
    })

    it("manages keys through the generated client", async () => {
      const account = await makeAccount(context.target)
      const result = await Effect.runPromise(
        Client.make({ baseUrl: context.target.baseUrl, apiKey: account.ownerKey }).pipe(
          Effect.flatMap((client) =>
            Effect.gen(function* () {
              const created = yield* client.keys.create({
                payload: { name: "typed", scopes: ["leads:read"] },
                headers: {}
              })
              const page = yield* client.keys.list({ query: { limit: 2 } })
              const changed = yield* client.keys.setScopes({
                params: { key_id: created.id },
                payload: { scopes: ["analytics:read"] }
              })
              const revoked = yield* client.keys.revoke({ params: { key_id: created.id } })
              return { created, page, changed, revoked }
            })
          ),
          Effect.provide(FetchHttpClient.layer)
        )
      )
      expect(result.created.api_key).toMatch(/^lk_/)
      expect(result.page.keys).toContainEqual(Keys.summaryOf(result.created))
      expect(result.page.meta).toEqual({ limit: 2, offset: 0, total: 2, has_more: false, next_offset: null })
      expect(result.changed).toEqual({ ...Keys.summaryOf(result.created), scopes: ["analytics:read"] })
      expect(result.revoked).toEqual({ id: result.created.id, revoked: true })
    })
  })
}

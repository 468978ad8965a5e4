import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden, notFound } from "../internal/wire.ts"
import type { Admits, Slice } from "../Slice.ts"
import * as Keys from "./KeysResource.ts"

/** The OWASP checks that are about an account's own API keys; the runner (test/SecuritySuite.ts) places them. */

/** The keys each /api/keys route admits, as the contract has them: a full-access key only, whatever scopes another has. */
export const admits: Admits = {
  "GET /api/keys": ["full access"],
  "POST /api/keys": ["full access"],
  "PATCH /api/keys/{key_id}": ["full access"],
  "DELETE /api/keys/{key_id}": ["full access"]
}

const excess = (path: string) => ({ path, message: "Expected no excess property" })

/** The SHA-256 of a key in the encodings a leak could take. */
const digests = async (key: string): Promise<ReadonlyArray<string>> => {
  const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)))
  return [digest.toString("hex"), digest.toString("base64"), digest.toString("base64url")]
}

export const security: Slice["security"] = {
  API1: (context) =>
    describe("api keys", () => {
      // Alice owns the key; Bob, with full access to his own account and a key of all 16 scopes, tries to reach it.
      let alice: AccountFixture
      let bob: AccountFixture
      let aliceKey: Keys.CreatedKey & { readonly api_key: string }

      beforeAll(async () => {
        alice = await makeAccount(context.target, { name: "Alice Ltd" })
        bob = await makeAccount(context.target, { name: "Bob Ltd" })
        aliceKey = await Keys.createKey(context.target, alice.ownerKey, { name: "alice's", scopes: ["leads:read"] })
      })

      it("answers Bob's PATCH and DELETE of Alice's key as for an id never issued, and her key keeps working", async () => {
        const never = Keys.unknownKeyId()
        for (const [method, json] of [
          ["PATCH", { scopes: [] }],
          ["DELETE", undefined]
        ] as const) {
          const reply = await call(context.target, method, `/api/keys/${aliceKey.id}`, { auth: bob.ownerKey, json })
          expect(reply.status, reply.text).toBe(404)
          expect(reply.body).toEqual(notFound("api key", aliceKey.id))
          const neverReply = await call(context.target, method, `/api/keys/${never}`, { auth: bob.ownerKey, json })
          expect(neverReply.text.replace(never, aliceKey.id)).toBe(reply.text)
        }
        // Not revoked, not widened: Alice's leads:read key still reads leads and still may not write them.
        const me = await call(context.target, "GET", "/api/me", { auth: aliceKey.api_key })
        expect(me.status).toBe(200)
        expect(me.body.scopes).toEqual(["leads:read"])
        const write = await call(context.target, "POST", "/api/v1/leads", {
          auth: aliceKey.api_key,
          json: { name: "Nope", phone: "+14155550123" }
        })
        expect(write.body).toEqual(forbidden("leads:write"))
        expect((await Keys.keysListed(context.target, alice.ownerKey)).find((key) => key.id === aliceKey.id)).toEqual(
          Keys.summaryOf(aliceKey)
        )
      })

      it("never lists another account's keys, and makes a key in the caller's account only", async () => {
        const bobKey = await Keys.createKey(context.target, bob.ownerKey, { name: "bob's" })
        const bobIds = (await Keys.keysListed(context.target, bob.ownerKey)).map((key) => key.id)
        const aliceIds = (await Keys.keysListed(context.target, alice.ownerKey)).map((key) => key.id)
        expect(bobIds).toContain(bobKey.id)
        expect(bobIds).not.toContain(aliceKey.id)
        expect(aliceIds).not.toContain(bobKey.id)
        expect(bobIds.filter((id) => aliceIds.includes(id))).toEqual([])
        // Bob's new key is Bob's: it sees his account, not Alice's.
        const me = await call(context.target, "GET", "/api/me", { auth: bobKey.api_key })
        expect(me.body.account.owner_user_id).toBe(bob.ownerUserId)
      })
    }),

  API3: (context) =>
    describe("api keys", () => {
      let account: AccountFixture

      beforeAll(async () => {
        account = await makeAccount(context.target)
      })

      it("refuses a caller-chosen id, prefix, user, key, hash, account or dates at creation, naming each", async () => {
        const before = await Keys.keysListed(context.target, account.ownerKey)
        const forged = {
          id: "key_00000000000000000000000000",
          prefix: "lk_chosen",
          user_id: crypto.randomUUID(),
          api_key: `lk_${"A".repeat(43)}`,
          hash: "0".repeat(64),
          account_id: crypto.randomUUID(),
          created_at: "2000-01-01T00:00:00.000Z",
          revoked_at: null
        }
        const reply = await Keys.postKey(context.target, account.ownerKey, { name: "mass assigned", ...forged })
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        const details: ReadonlyArray<{ path: string; message: string }> = reply.body.details
        expect(details.toSorted((a, b) => (a.path < b.path ? -1 : 1))).toEqual(Object.keys(forged).sort().map(excess))
        expect(await Keys.keysListed(context.target, account.ownerKey)).toEqual(before)
        // The well-formed key named above was never issued.
        expect((await call(context.target, "GET", "/api/me", { auth: forged.api_key })).status).toBe(401)
      })

      it("refuses a changed id, user, name or revocation in a PATCH body and leaves the key as it was", async () => {
        const key = await Keys.createKey(context.target, account.ownerKey, { name: "patched", scopes: ["leads:read"] })
        const reply = await call(context.target, "PATCH", `/api/keys/${key.id}`, {
          auth: account.ownerKey,
          json: { scopes: ["leads:write"], id: "key_other", user_id: crypto.randomUUID(), name: "x", revoked_at: null }
        })
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body.details.map((detail: { path: string }) => detail.path).sort()).toEqual(
          ["id", "name", "revoked_at", "user_id"].sort()
        )
        expect((await Keys.keysListed(context.target, account.ownerKey)).find((k) => k.id === key.id)).toEqual(
          Keys.summaryOf(key)
        )
      })

      it("shows an API key in its create answer only: not in lists, changes, replays, revocations or /api/me", async () => {
        const headers = { "idempotency-key": `shown-once-${crypto.randomUUID()}` }
        const body = { name: "shown once", scopes: ["leads:read"] }
        const created = await Keys.postKey(context.target, account.ownerKey, body, headers)
        expect(created.status, created.text).toBe(201)
        const secret: string = created.body.api_key
        expect(secret).toMatch(/^lk_[A-Za-z0-9_-]{43}$/)
        expect(created.text).toContain(secret)
        const texts = [
          (await Keys.postKey(context.target, account.ownerKey, body, headers)).text,
          (await call(context.target, "GET", "/api/keys", { auth: account.ownerKey })).text,
          (await call(context.target, "GET", "/api/me", { auth: secret })).text,
          (
            await call(context.target, "GET", `/admin/v1/accounts/${account.accountId}/keys`, {
              auth: context.target.adminToken
            })
          ).text,
          (
            await call(context.target, "PATCH", `/api/keys/${created.body.id}`, {
              auth: account.ownerKey,
              json: { scopes: ["analytics:read"] }
            })
          ).text,
          (await Keys.revokeKey(context.target, account.ownerKey, created.body.id)).text,
          (await call(context.target, "GET", "/api/keys", { auth: account.ownerKey })).text
        ]
        const hashes = await digests(secret)
        for (const text of texts) {
          expect(text).not.toContain(secret)
          for (const hash of hashes) expect(text).not.toContain(hash)
          expect(text).not.toContain(account.ownerKey)
        }
      })
    })
}

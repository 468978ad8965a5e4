import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import * as Resource from "../Resource.ts"
import type { Slice } from "../Slice.ts"

/** The OWASP check that is about the operator API; the runner (test/SecuritySuite.ts) places it under API3. */
export const security: Slice["security"] = {
  API3: (context) =>
    describe("operator API", () => {
      let account: AccountFixture

      beforeAll(async () => {
        account = await makeAccount(context.target)
      })

      it("never shows an API key again after issuing it, nor its hash", async () => {
        const key = await makeKey(context.target, account.accountId, { name: "shown once", scopes: ["leads:read"] })
        const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key.apiKey)))
        const listing = await call(context.target, "GET", `/admin/v1/accounts/${account.accountId}/keys`, {
          auth: context.target.adminToken
        })
        expect(listing.status).toBe(200)
        const me = await call(context.target, "GET", "/api/me", { auth: key.apiKey })
        for (const text of [listing.text, me.text]) {
          expect(text).not.toContain(key.apiKey)
          expect(text).not.toContain(account.ownerKey)
          expect(text).not.toContain(digest.toString("hex"))
          expect(text).not.toContain(digest.toString("base64"))
          expect(text).not.toContain(digest.toString("base64url"))
        }
        expect(listing.body.keys.find((listed: { id: string }) => listed.id === key.id)).toEqual({
          id: key.id,
          name: "shown once",
          user_id: account.ownerUserId,
          prefix: key.apiKey.slice(0, 9),
          scopes: ["leads:read"],
          created_at: expect.any(String),
          revoked_at: null
        })
      })

      it("shows no API key, hash or webhook secret in the account listing and view", async () => {
        const key = await makeKey(context.target, account.accountId, { name: "unseen", scopes: ["leads:read"] })
        const registered = await call(context.target, "POST", "/api/webhooks/endpoints", {
          auth: account.ownerKey,
          json: { url: Resource.receiverUrl(context, "/unseen"), events: ["order.created"] }
        })
        expect(registered.status, registered.text).toBe(201)
        const texts = [
          await call(context.target, "GET", "/admin/v1/accounts?limit=100", { auth: context.target.adminToken }),
          await call(context.target, "GET", `/admin/v1/accounts/${account.accountId}`, {
            auth: context.target.adminToken
          })
        ].map((reply) => {
          expect(reply.status, reply.text).toBe(200)
          return reply.text
        })
        expect(texts[0]).toContain(account.accountId)
        for (const secret of [key.apiKey, account.ownerKey]) {
          const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret)))
          for (const text of texts) {
            expect(text).not.toContain(secret)
            expect(text).not.toContain(digest.toString("hex"))
            expect(text).not.toContain(registered.body.secret)
            expect(text).not.toContain("lk_")
            expect(text).not.toContain("whsec_")
          }
        }
      })
    })
}

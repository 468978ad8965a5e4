import { expect, it, describe } from "vitest"
import { makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { UNAUTHORIZED } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"

/** Keys: one 401 for every bad credential, and scope changes that apply at once. */
export const contract = (context: ContractContext) => {
  describe("authentication", () => {
    it("answers 401 with one body for missing, malformed, unknown and revoked keys", async () => {
      const revoked = await makeKey(context.target, context.acme.accountId, { name: "to revoke" })
      const revoke = await call(context.target, "DELETE", `/admin/v1/keys/${revoked.id}`, {
        auth: context.target.adminToken
      })
      expect(revoke.status).toBe(200)
      expect(revoke.body).toEqual({ id: revoked.id, revoked: true })

      const unknownKey = `lk_${"A".repeat(43)}`
      const attempts = [
        await call(context.target, "GET", "/api/me"),
        await call(context.target, "GET", "/api/me", { headers: { authorization: "Basic dXNlcjpwYXNz" } }),
        await call(context.target, "GET", "/api/me", { auth: "not-a-key" }),
        await call(context.target, "GET", "/api/me", { auth: unknownKey }),
        await call(context.target, "GET", "/api/me", { auth: revoked.apiKey })
      ]
      for (const reply of attempts) {
        expect(reply.status).toBe(401)
        expect(reply.body).toEqual(UNAUTHORIZED)
        expect(reply.headers.get("www-authenticate")).toBe("Bearer")
      }
    })

    it("applies a scope change on the key's next request", async () => {
      const key = await makeKey(context.target, context.acme.accountId, { scopes: ["leads:read"] })
      expect((await call(context.target, "GET", "/api/usage", { auth: key.apiKey })).status).toBe(403)
      const patched = await call(context.target, "PATCH", `/admin/v1/keys/${key.id}`, {
        auth: context.target.adminToken,
        json: { scopes: ["analytics:read"] }
      })
      expect(patched.status).toBe(200)
      expect(patched.body.scopes).toEqual(["analytics:read"])
      expect((await call(context.target, "GET", "/api/usage", { auth: key.apiKey })).status).toBe(200)
      expect((await call(context.target, "GET", "/api/v1/leads", { auth: key.apiKey })).status).toBe(403)
    })
  })
}

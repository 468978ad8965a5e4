import { describe, expect, it } from "vitest"
import { call } from "../Http.ts"
import type { ContractContext } from "../Slice.ts"

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

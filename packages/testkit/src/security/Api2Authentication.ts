import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { UNAUTHORIZED } from "../internal/wire.ts"
import type { Kit } from "./Kit.ts"

/** The suite's API2 checks, over the shared kit. */
export const api2Authentication = (kit: Kit) => {
  const { server, context, ADMIN_UNAUTHORIZED, expectUnauthorized, ALL_ROUTES, API_ROUTES, routeName, send } = kit
  describe("API2 broken authentication", () => {
    let account: AccountFixture

    beforeAll(async () => {
      account = await makeAccount(server)
    })

    const me = (headers: Record<string, string> = {}, query = "") => call(server, "GET", `/api/me${query}`, { headers })
    const revoke = async (keyId: string) => {
      const reply = await call(server, "DELETE", `/admin/v1/keys/${keyId}`, { auth: server.adminToken })
      expect(reply.body).toEqual({ id: keyId, revoked: true })
    }

    it("accepts the owner key, so the refusals below are about the credential", async () => {
      expect((await me({ authorization: `Bearer ${account.ownerKey}` })).status).toBe(200)
    })

    it.each([
      ["no Authorization header", () => ({})],
      ["an empty Authorization header", () => ({ authorization: "" })],
      ["Bearer alone", () => ({ authorization: "Bearer" })],
      ["Bearer with two spaces and junk", () => ({ authorization: "Bearer  x" })],
      ["the key without a scheme", () => ({ authorization: account.ownerKey })],
      ["the key as Basic credentials", () => ({ authorization: `Basic ${btoa(`${account.ownerKey}:`)}` })],
      ["the key under another scheme", () => ({ authorization: `Token ${account.ownerKey}` })],
      ["a truncated key", () => ({ authorization: `Bearer ${account.ownerKey.slice(0, -1)}` })],
      ["a key with a character added", () => ({ authorization: `Bearer ${account.ownerKey}x` })],
      ["the key upper-cased", () => ({ authorization: `Bearer ${account.ownerKey.toUpperCase()}` })],
      ["a well-formed key never issued", () => ({ authorization: `Bearer lk_${"A".repeat(43)}` })],
      ["a short lk_ value", () => ({ authorization: "Bearer lk_abc" })],
      ["the admin token", () => ({ authorization: `Bearer ${server.adminToken}` })]
    ])("refuses %s with the one 401", async (_, headers) => {
      expectUnauthorized(await me(headers()))
    })

    it("treats the Bearer scheme name case-insensitively, as RFC 9110 says", async () => {
      for (const scheme of ["bearer", "BEARER"]) {
        const reply = await me({ authorization: `${scheme} ${account.ownerKey}` })
        expect(reply.status, scheme).toBe(200)
      }
    })

    it.each([
      ["the api_key query parameter", () => [{}, `?api_key=${account.ownerKey}`] as const],
      ["the access_token query parameter", () => [{}, `?access_token=${account.ownerKey}`] as const],
      ["an X-API-Key header", () => [{ "x-api-key": account.ownerKey }, ""] as const],
      ["a cookie", () => [{ cookie: `api_key=${account.ownerKey}` }, ""] as const]
    ])("takes keys only from the Authorization header, not %s", async (_, where) => {
      const [headers, query] = where()
      expectUnauthorized(await me({ ...headers }, query))
    })

    it.each(ALL_ROUTES.map((route) => [routeName(route), route] as const))(
      "%s without a credential is 401",
      async (_, route) => {
        const request = await route.request(context, account)
        const reply = await send(route, request, undefined)
        expectUnauthorized(reply, route.needs === "admin token" ? ADMIN_UNAUTHORIZED : UNAUTHORIZED)
        await request.unchanged?.()
      }
    )

    it("refuses a key revoked before its first use", async () => {
      const key = await makeKey(server, account.accountId, { name: "never used" })
      await revoke(key.id)
      expectUnauthorized(await me({ authorization: `Bearer ${key.apiKey}` }))
    })

    it("refuses a key from the request after its revocation on, on every route, and only that key", async () => {
      const key = await makeKey(server, account.accountId, { name: "in use" })
      expect((await me({ authorization: `Bearer ${key.apiKey}` })).status).toBe(200)
      expect((await call(server, "GET", "/api/v1/leads", { auth: key.apiKey })).status).toBe(200)
      await revoke(key.id)
      for (const route of API_ROUTES) {
        // Set-up (a lead, an endpoint) is made with the still valid owner key.
        const request = await route.request(context, account)
        expectUnauthorized(await send(route, request, key.apiKey))
        await request.unchanged?.()
      }
      expect((await me({ authorization: `Bearer ${account.ownerKey}` })).status).toBe(200)
    })

    it("refuses an API key as the admin token, even a full-access one", async () => {
      const reply = await call(server, "GET", `/admin/v1/accounts/${account.accountId}/keys`, {
        auth: account.ownerKey
      })
      expectUnauthorized(reply, ADMIN_UNAUTHORIZED)
    })
  })
}

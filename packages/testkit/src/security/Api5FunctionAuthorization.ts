import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import * as Resources from "../Resources.ts"
import type { Kit } from "./Kit.ts"

/** The suite's API5 checks, over the shared kit. */
export const api5FunctionAuthorization = (kit: Kit) => {
  const { server, context, ADMIN_UNAUTHORIZED, SCOPES, expectUnauthorized, API_ROUTES, ADMIN_ROUTES, routeName, send } =
    kit
  describe("API5 broken function level authorization", () => {
    // One key per scope, one with all 16 (still not full access), and the owner's full-access key.
    const SCOPE_SETS: Record<string, ReadonlyArray<string>> = {
      ...Object.fromEntries(SCOPES.map((scope) => [scope, [scope]])),
      "all 16 scopes": SCOPES,
      "full access": []
    }
    let account: AccountFixture

    beforeAll(async () => {
      account = await makeAccount(server, { keys: SCOPE_SETS })
    })

    const { allows, requirement } = Resource

    const cases = API_ROUTES.flatMap((route) =>
      Object.entries(SCOPE_SETS).map(([set, scopes]) => {
        const allowed = allows(route.needs, scopes)
        return [`${routeName(route)} with ${set}: ${allowed ? route.succeeds : 403}`, route, set, allowed] as const
      })
    )

    it("derives from the contract the key sets each route admits", () => {
      // Each slice spells out what its routes admit (`admits`, in its `*Security.ts`), apart from their
      // `needs`, so a slip in `needs` or `allows` cannot hide behind the matrix they generate.
      const admitted = Object.fromEntries(
        API_ROUTES.map((route) => [
          routeName(route),
          cases.filter(([, r, , allowed]) => r === route && allowed).map(([, , set]) => set)
        ])
      )
      for (const slice of Resources.slices) {
        const routes = slice.resources.flatMap((resource) => resource.routes.filter(Resource.isApiRoute).map(routeName))
        const stated = Object.keys(slice.admits ?? {})
        expect(
          routes.filter((route) => !stated.includes(route)),
          `${slice.name}: API routes whose admitted key sets the slice's admits do not state`
        ).toEqual([])
        expect(
          stated.filter((route) => !routes.includes(route)),
          `${slice.name}: routes in the slice's admits that are none of its API routes`
        ).toEqual([])
      }
      const every = Object.keys(SCOPE_SETS)
      const expected = Object.fromEntries(
        Resources.slices.flatMap((slice) =>
          Object.entries(slice.admits ?? {}).map(([route, sets]) => [route, sets === "every key set" ? every : sets])
        )
      )
      // As sets: the order a slice lists them in says nothing.
      const sorted = (table: Record<string, ReadonlyArray<string>>) =>
        Object.fromEntries(Object.entries(table).map(([route, sets]) => [route, [...sets].sort()]))
      expect(sorted(admitted)).toEqual(sorted(expected))
    })

    it.each(cases)("%s", async (_, route, set, allowed) => {
      const request = await route.request(context, account)
      const reply = await send(route, request, account.keys[set]!.apiKey)
      // API8 wants a request id on every response, the successful ones included.
      expect(reply.headers.get("x-request-id")).toMatch(/^req_[0-9a-z]{26}$/)
      if (allowed) {
        expect(reply.status, reply.text).toBe(route.succeeds)
      } else {
        expect(reply.status).toBe(403)
        expect(reply.body).toEqual(
          forbidden(requirement(route.needs as Exclude<Resource.Needs, "any key" | "admin token">))
        )
        await request.unchanged?.()
      }
    })

    it.each(ADMIN_ROUTES.map((route) => [routeName(route), route] as const))(
      "%s refuses every API key with 401, full access included",
      async (_, route) => {
        for (const set of ["full access", "all 16 scopes", "leads:write"]) {
          const request = await route.request(context, account)
          expectUnauthorized(await send(route, request, account.keys[set]!.apiKey), ADMIN_UNAUTHORIZED)
          await request.unchanged?.()
        }
        // The operator token passes, so the refusals above are about the credential.
        const reply = await send(route, await route.request(context, account), server.adminToken)
        expect(reply.status, reply.text).toBe(route.succeeds)
      }
    )

    it("applies a scope change from the next request on", async () => {
      const key = await makeKey(server, account.accountId, { name: "changing", scopes: ["leads:read"] })
      expect((await call(server, "GET", "/api/v1/leads", { auth: key.apiKey })).status).toBe(200)
      const changed = await call(server, "PATCH", `/admin/v1/keys/${key.id}`, {
        auth: server.adminToken,
        json: { scopes: ["analytics:read"] }
      })
      expect(changed.status).toBe(200)
      const reply = await call(server, "GET", "/api/v1/leads", { auth: key.apiKey })
      expect(reply.status).toBe(403)
      expect(reply.body).toEqual(forbidden("leads:read"))
    })
  })
}

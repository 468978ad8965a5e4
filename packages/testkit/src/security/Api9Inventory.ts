import { beforeAll, describe, expect, it } from "vitest"
import * as Coverage from "../Coverage.ts"
import { type AccountFixture, makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import * as Resources from "../Resources.ts"
import type { Kit } from "./Kit.ts"

/** The suite's API9 checks, over the shared kit. */
export const api9Inventory = (kit: Kit) => {
  const { server, unknownLeadId, ALL_ROUTES, routeName } = kit
  describe("API9 improper inventory management", () => {
    const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
    // Served for operations, not part of the API: health checks and the API's own docs.
    const OUTSIDE_THE_DOCUMENT = ["/healthz", "/readyz", "/docs", "/api/openapi.json"]
    let account: AccountFixture
    let spec: { paths: Record<string, Record<string, unknown>> }

    beforeAll(async () => {
      account = await makeAccount(server)
      const reply = await call(server, "GET", "/api/openapi.json")
      expect(reply.status).toBe(200)
      spec = reply.body
    })

    const documented = () =>
      Object.entries(spec.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => METHODS.includes(key))
          .map((method) => `${method.toUpperCase()} ${path}`)
      )

    it("documents exactly the routes the descriptors declare", () => {
      expect(documented().sort()).toEqual(ALL_ROUTES.map(routeName).sort())
      expect(Coverage.routeGaps(Coverage.documentedRoutes(spec), Resources.all)).toEqual({
        undeclared: [],
        undocumented: [],
        duplicated: []
      })
    })

    it("answers no method the document does not list on its paths", async () => {
      const concrete = (path: string) =>
        path
          .replace("{id}", unknownLeadId())
          .replace("{account_id}", account.accountId)
          .replace("{key_id}", "key_00000000000000000000000000")
      const operations = new Set(documented())
      for (const path of Object.keys(spec.paths)) {
        for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
          const auth = path.startsWith("/admin/") ? server.adminToken : account.ownerKey
          // No body: a documented POST or PATCH answers 400, an undocumented one 404.
          const reply = await call(server, method, concrete(path), { auth })
          const noSuchRoute = reply.status === 404 && reply.body?.error === "No such route"
          expect(noSuchRoute, `${method} ${path}: ${reply.status} ${reply.text}`).toBe(
            !operations.has(`${method} ${path}`)
          )
        }
      }
    })

    it.each(["/api/v0/leads", "/api/v2/leads", "/api/leads", "/v1/leads", "/api/v1/lead", "/api/internal/leads"])(
      "serves no other version or shadow route: %s",
      async (path) => {
        const reply = await call(server, "GET", path, { auth: account.ownerKey })
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual({ error: "No such route", code: "not_found" })
      }
    )

    it.each(OUTSIDE_THE_DOCUMENT)("serves %s without a key, and it reveals no data", async (path) => {
      const reply = await call(server, "GET", path)
      expect(reply.status).toBe(200)
      expect(reply.headers.get("x-request-id")).toMatch(/^req_/)
      expect(reply.text).not.toContain(account.accountId)
      expect(reply.text).not.toContain(server.adminToken)
    })
  })
}

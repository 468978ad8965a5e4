import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Coverage from "./Coverage.ts"
import { isolationSuite } from "./DescriptorSuites.ts"
import { type AccountFixture, makeAccount, makeKey, nextPhone } from "./Fixtures.ts"
import { call, type Reply } from "./Http.ts"
import { forbidden, UNAUTHORIZED } from "./internal/wire.ts"
import * as Leads from "./leads/LeadsResource.ts"
import * as MockReceiver from "./MockReceiver.ts"
import * as Resource from "./Resource.ts"
import type { OwaspItem, SecurityContext } from "./Slice.ts"
import * as Resources from "./Resources.ts"
import type { Target } from "./TestServer.ts"
import * as Webhooks from "./webhooks/WebhooksResource.ts"

/**
 * The OWASP API Security Top 10 (2023), item by item, against a running Leadline over HTTP:
 * a test server on any wiring (test/security.memory.test.ts, test/security.sql.test.ts) or a
 * deployment (`LEADLINE_URL`, examples/contract-test). Each `describe` names the item it
 * covers. This runner holds the checks that cross resources; the route inventory and the
 * tenant-isolation cases come from the descriptors of `Resources.ts`, and each slice adds its
 * own checks under the item they belong to, and the key sets its routes admit (API5), in
 * `<slice>/*Security.ts`. Every test makes its own accounts.
 *
 * Covered elsewhere or not applicable:
 * - API4 rate limiting: the testkit's rate-limit test and the server's shared rate-limit test;
 *   the request timeout: the testkit's request-timeout test.
 * - API6 (sensitive business flows): orders and campaigns are guarded by their scopes (API5)
 *   and their contract tests.
 * - API7 (SSRF): the testkit's webhooks-ssrf test (refused addresses at registration, and
 *   after DNS at delivery).
 * - API10 (unsafe consumption of APIs): the only third-party responses Leadline consumes are
 *   webhook receivers'; the webhooks test checks that a 3xx is not followed and a hanging
 *   receiver times out at 10 s.
 */

export interface SecurityOptions {
  /**
   * Start a webhook receiver on this machine for the cases that need a delivery to settle (the
   * default). The target must then deliver to loopback URLs (`WEBHOOK_ALLOW_PRIVATE_URLS=true`);
   * with `false`, those cases are left out and endpoints are registered at an unreachable URL.
   */
  readonly receiver?: boolean | undefined
}

/**
 * Registers the suite in the calling file. `getTarget` is read in the suite's `beforeAll`, so a
 * server the file starts in its own `beforeAll` is ready by then.
 */
export const securitySuite = (name: string, getTarget: () => Target, options: SecurityOptions = {}) =>
  describe(`OWASP API Security Top 10 on ${name}`, () => {
    const withReceiver = options.receiver ?? true
    let server: Target
    let receiver: MockReceiver.MockReceiver | undefined

    beforeAll(async () => {
      server = getTarget()
      if (withReceiver) receiver = await MockReceiver.start()
    })
    afterAll(async () => {
      await receiver?.close()
    })

    const context: SecurityContext = {
      get target() {
        return server
      },
      get receiver() {
        return receiver
      }
    }

    /** Registers the slices' checks for one OWASP item, each in its own describe. */
    const sliceChecks = (item: OwaspItem) => {
      for (const slice of Resources.slices) slice.security?.[item]?.(context)
    }

    const ADMIN_UNAUTHORIZED = { error: "Invalid or missing admin token", code: "unauthorized" }

    /** The 16 scopes of docs/contract.md. */
    const SCOPES = [
      "leads:read",
      "leads:write",
      "conversations:read",
      "messages:send",
      "campaigns:read",
      "campaigns:write",
      "campaigns:send",
      "orders:read",
      "orders:write",
      "catalogue:read",
      "knowledge:read",
      "knowledge:write",
      "agents:read",
      "agents:write",
      "analytics:read",
      "ai:use"
    ] as const

    /** A 401 exactly as the contract has it: the one body, and the Bearer challenge. */
    const expectUnauthorized = (reply: Reply, body: typeof UNAUTHORIZED = UNAUTHORIZED) => {
      expect(reply.status, reply.text).toBe(401)
      expect(reply.text).toBe(JSON.stringify(body))
      expect(reply.headers.get("www-authenticate")).toBe("Bearer")
    }

    const createLead = (owner: AccountFixture, fields: Record<string, unknown> = {}) =>
      Leads.createLead(server, owner.ownerKey, fields)

    const makeDelivery = (owner: AccountFixture) => Webhooks.makeDelivery(context, owner.ownerKey)

    const unknownLeadId = Leads.unknownLeadId

    /**
     * Any method, byte for byte, through node:http: fetch refuses TRACE, and this
     * sends exactly the headers given (Content-Length included when there is a body).
     */
    const rawCall = (
      method: string,
      path: string,
      options: { readonly headers?: Record<string, string>; readonly body?: string | Uint8Array } = {}
    ) =>
      new Promise<Reply>((resolve, reject) => {
        const url = new URL(path, server.baseUrl)
        const body = options.body === undefined ? undefined : Buffer.from(options.body)
        const headers = { ...options.headers, ...(body === undefined ? {} : { "content-length": String(body.length) }) }
        const req = httpRequest(
          { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method, headers },
          (res) => {
            const chunks: Array<Buffer> = []
            res.on("data", (chunk: Buffer) => chunks.push(chunk))
            res.on("end", () => {
              const text = Buffer.concat(chunks).toString("utf8")
              let parsed: unknown
              try {
                parsed = JSON.parse(text)
              } catch {
                parsed = undefined
              }
              const responseHeaders = new Headers()
              for (const [name, value] of Object.entries(res.headers)) {
                if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(", ") : value)
              }
              resolve({ status: res.statusCode ?? 0, headers: responseHeaders, text, body: parsed })
            })
          }
        )
        req.on("error", reject)
        req.end(body)
      })

    // The inventory: every route of every descriptor, what it needs, and a request that succeeds on it.
    // API2, API5 and API9 all run over it, and API1's isolation cases come from the same descriptors.
    const ALL_ROUTES = Resources.all.flatMap((resource) => resource.routes)
    const API_ROUTES = ALL_ROUTES.filter(Resource.isApiRoute)
    const ADMIN_ROUTES = ALL_ROUTES.filter((route) => !Resource.isApiRoute(route))
    const routeName = Resource.routeName
    /** The GET routes an API key reaches that address nothing: they read the caller's own account. */
    const READS = API_ROUTES.filter((route) => route.method === "GET" && route.addresses === undefined).map(
      Resource.probePath
    )

    const send = (route: Resource.Route, request: Resource.RouteRequest, auth: string | undefined) =>
      call(server, route.method, request.path, {
        auth,
        ...(request.json === undefined ? {} : { json: request.json })
      })

    describe("API1 broken object level authorization", () => {
      // Alice owns the objects; Bob, with full access to his own account, tries to reach them by id.
      isolationSuite(Resources.all, () => context, { receiver: withReceiver })
      sliceChecks("API1")
    })

    describe("API2 broken authentication", () => {
      let account: AccountFixture

      beforeAll(async () => {
        account = await makeAccount(server)
      })

      const me = (headers: Record<string, string> = {}, query = "") =>
        call(server, "GET", `/api/me${query}`, { headers })
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

    describe("API3 broken object property level authorization", () => {
      let account: AccountFixture
      let other: AccountFixture

      beforeAll(async () => {
        account = await makeAccount(server)
        other = await makeAccount(server)
      })

      it("never answers with another account's data, on any route that reads", async () => {
        const { endpoint, lead, delivery } = await makeDelivery(other)
        const secrets = [other.accountId, other.ownerUserId, lead.id, lead.phone, endpoint.id, delivery.id]
        for (const path of READS) {
          const reply = await call(server, "GET", path, { auth: account.ownerKey })
          expect(reply.status, path).toBe(200)
          for (const secret of secrets) expect(reply.text, `${path} shows ${secret}`).not.toContain(secret)
        }
      })

      sliceChecks("API3")
    })

    describe("API4 unrestricted resource consumption", () => {
      const LIMIT = 1024 * 1024
      const TOO_LARGE = { error: `The request body is over the limit of ${LIMIT} bytes`, code: "payload_too_large" }
      let account: AccountFixture

      beforeAll(async () => {
        account = await makeAccount(server)
      })

      /** A lead body of exactly `bytes` bytes, padded inside `attributes`. */
      const leadBodyOf = (bytes: number) => {
        const shell = JSON.stringify({ name: "Big", phone: nextPhone(), attributes: { pad: "" } })
        const body = shell.replace('"pad":""', `"pad":"${"x".repeat(bytes - shell.length)}"`)
        expect(Buffer.byteLength(body)).toBe(bytes)
        return body
      }

      const post = (raw: string, auth: string | undefined = account.ownerKey) =>
        call(server, "POST", "/api/v1/leads", { auth, raw, headers: { "content-type": "application/json" } })

      it("refuses a body over 1 MiB from its Content-Length, before the key, and closes the connection", async () => {
        for (const auth of [account.ownerKey, undefined]) {
          const reply = await post(leadBodyOf(LIMIT + 1), auth)
          expect(reply.status).toBe(413)
          expect(reply.body).toEqual(TOO_LARGE)
          expect(reply.headers.get("connection")).toBe("close")
        }
      })

      it("reads a body of exactly 1 MiB (and then refuses its oversized attributes)", async () => {
        const reply = await post(leadBodyOf(LIMIT))
        expect(reply.status).toBe(400)
        expect(reply.body.details).toEqual([
          { path: "attributes", message: "attributes must be at most 16 KiB of JSON" }
        ])
      })

      it("cuts a chunked body off once it passes 1 MiB, without reading the rest", async () => {
        const chunk = new Uint8Array(64 * 1024).fill(0x20)
        const cap = 64 * 1024 * 1024
        let sent = 0
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= cap) return controller.close()
            sent += chunk.length
            controller.enqueue(chunk)
          }
        })
        const response = await fetch(`${server.baseUrl}/api/v1/leads`, {
          method: "POST",
          body,
          duplex: "half",
          headers: { authorization: `Bearer ${account.ownerKey}`, "content-type": "application/json" }
        } as RequestInit)
        expect(response.status).toBe(413)
        expect(response.headers.get("x-request-id")).toMatch(/^req_/)
        expect(await response.json()).toEqual({ error: "The request body is too large", code: "payload_too_large" })
        // The server answered long before the client ran out of body to send.
        expect(sent).toBeLessThan(cap / 2)
      })

      it.each(API_ROUTES.filter((route) => route.lists !== undefined).map((route) => route.path))(
        "refuses pages over 100 on %s",
        async (path) => {
          expect((await call(server, "GET", `${path}?limit=100`, { auth: account.ownerKey })).status).toBe(200)
          const reply = await call(server, "GET", `${path}?limit=101`, { auth: account.ownerKey })
          expect(reply.status).toBe(400)
          expect(reply.body).toEqual({
            error: "Invalid request query: limit: limit must be an integer from 1 to 100",
            code: "validation_error",
            details: [{ path: "limit", message: "limit must be an integer from 1 to 100" }]
          })
        }
      )

      it("refuses an offset past a billion, which would walk the index that far", async () => {
        const reply = await call(server, "GET", "/api/v1/leads?offset=1000000001", { auth: account.ownerKey })
        expect(reply.status).toBe(400)
        expect(reply.body.details).toEqual([
          { path: "offset", message: "offset must be an integer from 0 to 1000000000" }
        ])
      })

      sliceChecks("API4")
    })

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
          const routes = slice.resources.flatMap((resource) =>
            resource.routes.filter(Resource.isApiRoute).map(routeName)
          )
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

    describe("API8 security misconfiguration", () => {
      const LEAK = /at \w+ \(|\.ts:|\.js:|SELECT |INSERT |_tag|Effect/
      const REQUEST_ID = /^req_[0-9a-z]{26}$/
      let account: AccountFixture
      let reader: string
      let takenPhone: string
      const usedIdempotencyKey = `used-${crypto.randomUUID()}`

      beforeAll(async () => {
        account = await makeAccount(server, { keys: { reader: ["leads:read"] } })
        reader = account.keys.reader!.apiKey
        takenPhone = (await createLead(account)).phone
        const first = await call(server, "POST", "/api/v1/leads", {
          auth: account.ownerKey,
          json: { name: "First", phone: nextPhone() },
          headers: { "idempotency-key": usedIdempotencyKey }
        })
        expect(first.status).toBe(201)
      })

      interface Bad {
        readonly method: string
        readonly path: string
        /** Who calls: the owner (default), the read-only key, the admin token or nobody. */
        readonly as?: "owner" | "reader" | "admin" | "nobody"
        readonly body?: string | Uint8Array
        readonly headers?: Record<string, string>
        readonly status: number
      }

      const json = { "content-type": "application/json" }
      const BAD_REQUESTS: ReadonlyArray<readonly [string, () => Bad]> = [
        [
          "malformed JSON",
          () => ({ method: "POST", path: "/api/v1/leads", body: '{"name": ', headers: json, status: 400 })
        ],
        [
          "JSON with trailing junk",
          () => ({ method: "POST", path: "/api/v1/leads", body: "{} {}", headers: json, status: 400 })
        ],
        ["a JSON array", () => ({ method: "POST", path: "/api/v1/leads", body: "[1, 2]", headers: json, status: 400 })],
        ["JSON null", () => ({ method: "POST", path: "/api/v1/leads", body: "null", headers: json, status: 400 })],
        [
          "invalid UTF-8",
          () => ({
            method: "POST",
            path: "/api/v1/leads",
            body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
            headers: json,
            status: 400
          })
        ],
        [
          "wrong types everywhere",
          () => ({
            method: "POST",
            path: "/api/v1/leads",
            body: JSON.stringify({ name: 5, phone: true, email: 7, tags: "a", status: "vip", attributes: [1] }),
            headers: json,
            status: 400
          })
        ],
        [
          "a number too large for a double",
          () => ({
            method: "POST",
            path: "/api/v1/leads",
            body: '{"name":1e999,"phone":"+1"}',
            headers: json,
            status: 400
          })
        ],
        [
          "a __proto__ key",
          () => ({
            method: "POST",
            path: "/api/v1/leads",
            body: `{"name":"x","phone":"${nextPhone()}","__proto__":{"admin":true}}`,
            headers: json,
            status: 400
          })
        ],
        ["a huge limit", () => ({ method: "GET", path: "/api/v1/leads?limit=99999999999999999999", status: 400 })],
        ["an exponent offset", () => ({ method: "GET", path: "/api/v1/leads?offset=1e400", status: 400 })],
        ["a fractional limit", () => ({ method: "GET", path: "/api/v1/leads?limit=1.5", status: 400 })],
        [
          "a bad endpoint UUID",
          () => ({ method: "DELETE", path: "/api/webhooks/endpoints?id=not-a-uuid", status: 400 })
        ],
        [
          "SQL in a UUID filter",
          () => ({ method: "GET", path: "/api/webhooks/deliveries?endpoint_id=1'%20OR%20'1'='1", status: 400 })
        ],
        [
          "an unknown delivery status",
          () => ({ method: "GET", path: "/api/webhooks/deliveries?status=all", status: 400 })
        ],
        ["SQL in a lead id", () => ({ method: "GET", path: "/api/v1/leads/ld_'%20OR%201=1--", status: 404 })],
        [
          "SQL in a delivery id",
          () => ({ method: "POST", path: "/api/webhooks/deliveries/redeliver?id='%3B--", status: 404 })
        ],
        ["a path traversal", () => ({ method: "GET", path: "/api/v1/leads/..%2F..%2Fetc%2Fpasswd", status: 404 })],
        ["a 5000-character id", () => ({ method: "GET", path: `/api/v1/leads/${"x".repeat(5000)}`, status: 404 })],
        ["an unknown API route", () => ({ method: "GET", path: "/api/v1/contacts", status: 404 })],
        ["a deeper unknown route", () => ({ method: "GET", path: "/api/v1/leads/ld_x/notes", status: 404 })],
        ["an unknown admin route", () => ({ method: "GET", path: "/admin/v1/nowhere", as: "admin", status: 404 })],
        ["the root", () => ({ method: "GET", path: "/", as: "nobody", status: 404 })],
        ["a dotfile", () => ({ method: "GET", path: "/.env", as: "nobody", status: 404 })],
        ["PUT on a known path", () => ({ method: "PUT", path: "/api/v1/leads", status: 404 })],
        ["OPTIONS on an API route", () => ({ method: "OPTIONS", path: "/api/v1/leads", status: 404 })],
        [
          "a CORS preflight",
          () => ({
            method: "OPTIONS",
            path: "/api/v1/leads",
            as: "nobody",
            headers: { origin: "https://evil.example", "access-control-request-method": "DELETE" },
            status: 404
          })
        ],
        ["TRACE on an API route", () => ({ method: "TRACE", path: "/api/v1/leads", status: 404 })],
        ["TRACE on /api/me", () => ({ method: "TRACE", path: "/api/me", status: 404 })],
        ["HEAD on an API route", () => ({ method: "HEAD", path: "/api/v1/leads", status: 200 })],
        ["HEAD without a key", () => ({ method: "HEAD", path: "/api/v1/leads", as: "nobody", status: 401 })],
        ["no key", () => ({ method: "GET", path: "/api/v1/leads", as: "nobody", status: 401 })],
        [
          "an API key on an admin route",
          () => ({ method: "GET", path: `/admin/v1/accounts/${account.accountId}/keys`, status: 401 })
        ],
        [
          "a missing scope",
          () => ({ method: "DELETE", path: `/api/v1/leads/${unknownLeadId()}`, as: "reader", status: 403 })
        ],
        ["an unknown lead", () => ({ method: "GET", path: `/api/v1/leads/${unknownLeadId()}`, status: 404 })],
        [
          "a duplicate phone",
          () => ({
            method: "POST",
            path: "/api/v1/leads",
            body: JSON.stringify({ name: "Twin", phone: takenPhone }),
            headers: json,
            status: 409
          })
        ],
        [
          "text/plain",
          () => ({
            method: "POST",
            path: "/api/v1/leads",
            body: "{}",
            headers: { "content-type": "text/plain" },
            status: 415
          })
        ],
        [
          "no content type",
          () => ({ method: "POST", path: "/api/v1/leads", body: JSON.stringify({ name: "x" }), status: 415 })
        ],
        [
          "an oversized body",
          () => ({
            method: "POST",
            path: "/api/v1/leads",
            body: "x".repeat(1024 * 1024 + 1),
            headers: json,
            status: 413
          })
        ],
        [
          "an Idempotency-Key over 200 characters",
          () => ({
            method: "POST",
            path: "/api/v1/leads",
            body: JSON.stringify({ name: "x", phone: nextPhone() }),
            headers: { ...json, "idempotency-key": "k".repeat(201) },
            status: 400
          })
        ],
        [
          "a reused Idempotency-Key",
          () => ({
            method: "POST",
            path: "/api/v1/leads",
            body: JSON.stringify({ name: "Other", phone: nextPhone() }),
            headers: { ...json, "idempotency-key": usedIdempotencyKey },
            status: 422
          })
        ]
      ]

      const credentialOf = (as: Bad["as"]) =>
        as === "nobody" ? undefined : as === "admin" ? server.adminToken : as === "reader" ? reader : account.ownerKey

      it.each(BAD_REQUESTS)("answers %s with a bare error body and a request id", async (_, make) => {
        const bad = make()
        const credential = credentialOf(bad.as)
        const reply = await rawCall(bad.method, bad.path, {
          headers: { ...bad.headers, ...(credential === undefined ? {} : { authorization: `Bearer ${credential}` }) },
          ...(bad.body === undefined ? {} : { body: bad.body })
        })
        expect(reply.status, reply.text).toBe(bad.status)
        expect(reply.headers.get("x-request-id")).toMatch(REQUEST_ID)
        // Nothing says what runs the server, and no origin is let in by CORS.
        expect(reply.headers.get("x-powered-by")).toBeNull()
        expect(reply.headers.get("server")).toBeNull()
        expect(reply.headers.get("access-control-allow-origin")).toBeNull()
        expect(reply.text).not.toMatch(LEAK)
        if (bad.method === "HEAD") {
          expect(reply.text).toBe("")
          return
        }
        if (bad.status >= 400) {
          expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
          expect(typeof reply.body.error).toBe("string")
          expect(typeof reply.body.code).toBe("string")
          const extra = Object.keys(reply.body).filter((key) => !["error", "code", "details"].includes(key))
          expect(extra).toEqual([])
          if ("details" in reply.body) {
            for (const detail of reply.body.details) expect(Object.keys(detail).sort()).toEqual(["message", "path"])
          }
        }
      })

      it("makes its own request ids and never echoes a client's", async () => {
        const reply = await call(server, "GET", "/api/me", {
          auth: account.ownerKey,
          headers: { "x-request-id": "req_forged" }
        })
        expect(reply.headers.get("x-request-id")).toMatch(REQUEST_ID)
        expect(reply.headers.get("x-request-id")).not.toContain("forged")
      })
    })

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
  })

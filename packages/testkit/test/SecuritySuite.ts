import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, makeKey, makeUser, nextPhone } from "../src/Fixtures.ts"
import { call, type Reply } from "../src/Http.ts"
import * as MockReceiver from "../src/MockReceiver.ts"
import { LEAD_KEYS } from "../src/ContractSuite.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * The OWASP API Security Top 10 (2023), item by item, against a real server
 * over HTTP, on a given wiring (security.memory.test.ts and security.sql.test.ts
 * run it on the in-memory stores and on SQL). Each `describe` names the item it covers.
 *
 * Covered elsewhere or not applicable:
 * - API4 rate limiting: test/rate-limit.test.ts and the reference server's
 *   rate-limit-shared test; the request timeout: test/request-timeout.test.ts.
 * - API6 (sensitive business flows): Leadline has no purchase-like flow yet;
 *   campaigns and orders will bring one.
 * - API7 (SSRF): test/webhooks-ssrf.test.ts (refused addresses at registration,
 *   and after DNS at delivery).
 * - API10 (unsafe consumption of APIs): the only third-party responses Leadline
 *   consumes are webhook receivers'; test/webhooks.test.ts checks that a 3xx is
 *   not followed and a hanging receiver times out at 10 s.
 */

export interface Wiring {
  readonly name: string
  /** The stores to serve; undefined for the in-memory ones. */
  readonly app: () => Promise<TestServer.StartOptions["app"]>
  readonly dispose: () => Promise<void>
}

export const securitySuite = (wiring: Wiring) =>
  describe(`OWASP API Security Top 10 on ${wiring.name}`, () => {
    let server: TestServer.Running
    let receiver: MockReceiver.MockReceiver

    beforeAll(async () => {
      receiver = await MockReceiver.start()
      server = await TestServer.start({ app: await wiring.app(), webhooks: { allowPrivateUrls: true } })
    })
    afterAll(async () => {
      await server?.close()
      await receiver?.close()
      await wiring.dispose()
    })

    // ---------------------------------------------------------------------------
    // Expected bodies, helpers

    const UNAUTHORIZED = { error: "Invalid or missing API key", code: "unauthorized" }
    const ADMIN_UNAUTHORIZED = { error: "Invalid or missing admin token", code: "unauthorized" }
    const forbidden = (requirement: string) => ({
      error: `Insufficient scope: requires ${requirement}`,
      code: "forbidden"
    })
    const notFound = (resource: string, id: string) => ({ error: `No ${resource} with id ${id}`, code: "not_found" })
    const excess = (path: string) => ({ path, message: "Expected no excess property" })

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

    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

    const until = async <A>(probe: () => Promise<A>, done: (value: A) => boolean, timeoutMs = 10_000): Promise<A> => {
      const deadline = Date.now() + timeoutMs
      let value = await probe()
      while (!done(value) && Date.now() < deadline) {
        await sleep(50)
        value = await probe()
      }
      return value
    }

    /** A 401 exactly as the contract has it: the one body, and the Bearer challenge. */
    const expectUnauthorized = (reply: Reply, body: typeof UNAUTHORIZED = UNAUTHORIZED) => {
      expect(reply.status, reply.text).toBe(401)
      expect(reply.text).toBe(JSON.stringify(body))
      expect(reply.headers.get("www-authenticate")).toBe("Bearer")
    }

    const createLead = async (owner: AccountFixture, fields: Record<string, unknown> = {}) => {
      const reply = await call(server, "POST", "/api/v1/leads", {
        auth: owner.ownerKey,
        json: { name: "Ada Lovelace", phone: nextPhone(), ...fields }
      })
      expect(reply.status, reply.text).toBe(201)
      return reply.body as { id: string; phone: string; updated_at: string }
    }

    const readLead = async (owner: AccountFixture, id: string) => {
      const reply = await call(server, "GET", `/api/v1/leads/${id}`, { auth: owner.ownerKey })
      expect(reply.status, reply.text).toBe(200)
      return reply.body
    }

    let receiverPaths = 0
    /** Registers a fresh receiver endpoint for `events`; `order.created` never fires today, so it stays quiet. */
    const registerEndpoint = async (owner: AccountFixture, events: ReadonlyArray<string> = ["order.created"]) => {
      const endpoint = receiver.endpoint(`/security-${++receiverPaths}`)
      const reply = await call(server, "POST", "/api/webhooks/endpoints", {
        auth: owner.ownerKey,
        json: { url: endpoint.url, events }
      })
      expect(reply.status, reply.text).toBe(201)
      return { endpoint, id: reply.body.id as string, secret: reply.body.secret as string, text: reply.text }
    }

    interface DeliveryView {
      readonly id: string
      readonly event_id: string
      readonly status: string
      readonly attempts: ReadonlyArray<unknown>
    }

    const deliveriesOf = async (owner: AccountFixture, query = ""): Promise<ReadonlyArray<DeliveryView>> => {
      const reply = await call(server, "GET", `/api/webhooks/deliveries${query}`, { auth: owner.ownerKey })
      expect(reply.status, reply.text).toBe(200)
      return reply.body.deliveries
    }

    /** Makes a real delivery: an endpoint for lead.created, a lead, and the log showing it delivered. */
    const makeDelivery = async (owner: AccountFixture) => {
      const endpoint = await registerEndpoint(owner, ["lead.created"])
      const lead = await createLead(owner)
      await endpoint.endpoint.waitFor(1)
      const [delivery] = await until(
        () => deliveriesOf(owner, `?endpoint_id=${endpoint.id}`),
        (list) => list[0]?.status === "delivered"
      )
      expect(delivery?.status).toBe("delivered")
      return { endpoint, lead, delivery: delivery! }
    }

    const listedIds = async (owner: AccountFixture, path: string, field: string): Promise<ReadonlyArray<string>> => {
      const reply = await call(server, "GET", path, { auth: owner.ownerKey })
      expect(reply.status, reply.text).toBe(200)
      return reply.body[field].map((item: { id: string }) => item.id)
    }

    /** An id of the right shape that was never issued. */
    const unknownLeadId = () => `ld_${"0".repeat(10)}${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`

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

    // ---------------------------------------------------------------------------
    // The inventory: every route, what it needs, and a request that succeeds on it.
    // API2, API5 and API9 all run over this one table.

    type Needs = "any key" | "full access" | readonly [string, ...Array<string>]

    interface RouteRequest {
      readonly path: string
      readonly json?: unknown
      /** Asserts the object the request aimed at is as it was (after a refused request). */
      readonly unchanged?: () => Promise<void>
    }

    interface Route {
      readonly method: string
      /** As the OpenAPI document spells it. */
      readonly path: string
      /** Scopes that grant the route, the narrowest (the one a 403 names) first. */
      readonly needs: Needs
      /** What the route answers a key that may use it. */
      readonly succeeds: number
      /** A fresh request against objects of `account`, made with its owner key where set-up is needed. */
      readonly request: (account: AccountFixture) => Promise<RouteRequest>
    }

    const leadUnchanged = (account: AccountFixture, lead: unknown, id: string) => async () => {
      expect(await readLead(account, id)).toEqual(lead)
    }

    const withLead = async (account: AccountFixture, json?: unknown): Promise<RouteRequest> => {
      const lead = await createLead(account)
      return {
        path: `/api/v1/leads/${lead.id}`,
        ...(json === undefined ? {} : { json }),
        unchanged: leadUnchanged(account, lead, lead.id)
      }
    }

    /** One delivered delivery per account, made on first use: redeliver needs a real one. */
    const deliveries = new Map<string, Promise<{ delivery: DeliveryView }>>()
    const deliveryFor = (account: AccountFixture) => {
      let made = deliveries.get(account.accountId)
      if (made === undefined) {
        made = makeDelivery(account)
        deliveries.set(account.accountId, made)
      }
      return made
    }

    const API_ROUTES: ReadonlyArray<Route> = [
      { method: "GET", path: "/api/me", needs: "any key", succeeds: 200, request: async () => ({ path: "/api/me" }) },
      {
        method: "GET",
        path: "/api/usage",
        needs: ["analytics:read"],
        succeeds: 200,
        request: async () => ({ path: "/api/usage" })
      },
      {
        method: "GET",
        path: "/api/v1/leads",
        needs: ["leads:read", "leads:write"],
        succeeds: 200,
        request: async () => ({ path: "/api/v1/leads" })
      },
      {
        method: "POST",
        path: "/api/v1/leads",
        needs: ["leads:write"],
        succeeds: 201,
        request: async (account) => {
          const phone = nextPhone()
          return {
            path: "/api/v1/leads",
            json: { name: "Grace Hopper", phone },
            unchanged: async () => {
              const reply = await call(server, "GET", "/api/v1/leads?limit=100", { auth: account.ownerKey })
              expect(reply.body.leads.map((lead: { phone: string }) => lead.phone)).not.toContain(phone)
            }
          }
        }
      },
      {
        method: "GET",
        path: "/api/v1/leads/{id}",
        needs: ["leads:read", "leads:write"],
        succeeds: 200,
        request: (account) => withLead(account)
      },
      {
        method: "PATCH",
        path: "/api/v1/leads/{id}",
        needs: ["leads:write"],
        succeeds: 200,
        request: (account) => withLead(account, { status: "lost", name: "Changed" })
      },
      {
        method: "DELETE",
        path: "/api/v1/leads/{id}",
        needs: ["leads:write"],
        succeeds: 200,
        request: (account) => withLead(account)
      },
      {
        method: "POST",
        path: "/api/webhooks/endpoints",
        needs: "full access",
        succeeds: 201,
        request: async (account) => {
          const endpoint = receiver.endpoint(`/security-${++receiverPaths}`)
          return {
            path: "/api/webhooks/endpoints",
            json: { url: endpoint.url, events: ["order.created"] },
            unchanged: async () => {
              const reply = await call(server, "GET", "/api/webhooks/endpoints?limit=100", { auth: account.ownerKey })
              expect(reply.body.endpoints.map((listed: { url: string }) => listed.url)).not.toContain(endpoint.url)
            }
          }
        }
      },
      {
        method: "GET",
        path: "/api/webhooks/endpoints",
        needs: "full access",
        succeeds: 200,
        request: async () => ({ path: "/api/webhooks/endpoints" })
      },
      {
        method: "DELETE",
        path: "/api/webhooks/endpoints",
        needs: "full access",
        succeeds: 200,
        request: async (account) => {
          const { id } = await registerEndpoint(account)
          return {
            path: `/api/webhooks/endpoints?id=${id}`,
            unchanged: async () =>
              expect(await listedIds(account, "/api/webhooks/endpoints?limit=100", "endpoints")).toContain(id)
          }
        }
      },
      {
        method: "GET",
        path: "/api/webhooks/deliveries",
        needs: "full access",
        succeeds: 200,
        request: async () => ({ path: "/api/webhooks/deliveries" })
      },
      {
        method: "POST",
        path: "/api/webhooks/deliveries/redeliver",
        needs: "full access",
        succeeds: 200,
        request: async (account) => ({
          path: `/api/webhooks/deliveries/redeliver?id=${(await deliveryFor(account)).delivery.id}`
        })
      }
    ]

    const keysOf = async (account: AccountFixture) => {
      const reply = await call(server, "GET", `/admin/v1/accounts/${account.accountId}/keys`, {
        auth: server.adminToken
      })
      expect(reply.status, reply.text).toBe(200)
      return reply.body.keys as ReadonlyArray<{ id: string }>
    }

    /** A fresh key to aim a key route at; a refused request must leave it as it was. */
    const withKey = async (account: AccountFixture, json?: unknown): Promise<RouteRequest> => {
      const key = await makeKey(server, account.accountId, { name: "target", scopes: ["leads:read"] })
      const before = (await keysOf(account)).find((listed) => listed.id === key.id)
      return {
        path: `/admin/v1/keys/${key.id}`,
        ...(json === undefined ? {} : { json }),
        unchanged: async () => expect((await keysOf(account)).find((listed) => listed.id === key.id)).toEqual(before)
      }
    }

    const ADMIN_ROUTES: ReadonlyArray<Route> = [
      {
        method: "POST",
        path: "/admin/v1/accounts",
        needs: "full access",
        succeeds: 201,
        request: async () => ({ path: "/admin/v1/accounts", json: { name: "Mallory Ltd" } })
      },
      {
        method: "POST",
        path: "/admin/v1/accounts/{account_id}/users",
        needs: "full access",
        succeeds: 201,
        request: async (account) => ({ path: `/admin/v1/accounts/${account.accountId}/users`, json: { role: "admin" } })
      },
      {
        method: "POST",
        path: "/admin/v1/accounts/{account_id}/keys",
        needs: "full access",
        succeeds: 201,
        request: async (account) => {
          const before = await keysOf(account)
          return {
            path: `/admin/v1/accounts/${account.accountId}/keys`,
            json: { name: "minted" },
            unchanged: async () => expect(await keysOf(account)).toEqual(before)
          }
        }
      },
      {
        method: "GET",
        path: "/admin/v1/accounts/{account_id}/keys",
        needs: "full access",
        succeeds: 200,
        request: async (account) => ({ path: `/admin/v1/accounts/${account.accountId}/keys` })
      },
      {
        method: "PATCH",
        path: "/admin/v1/keys/{key_id}",
        needs: "full access",
        succeeds: 200,
        request: (account) => withKey(account, { scopes: [] })
      },
      {
        method: "DELETE",
        path: "/admin/v1/keys/{key_id}",
        needs: "full access",
        succeeds: 200,
        request: (account) => withKey(account)
      }
    ]

    const ALL_ROUTES = [...API_ROUTES, ...ADMIN_ROUTES]
    const routeName = (route: Route) => `${route.method} ${route.path}`

    const send = (route: Route, request: RouteRequest, auth: string | undefined) =>
      call(server, route.method, request.path, {
        auth,
        ...(request.json === undefined ? {} : { json: request.json })
      })

    // ---------------------------------------------------------------------------

    describe("API1 broken object level authorization", () => {
      // Alice owns the objects; Bob, with full access to his own account, tries to reach them by id.
      let alice: AccountFixture
      let bob: AccountFixture
      let aliceLead: Record<string, unknown> & { id: string }
      let aliceEndpoint: Awaited<ReturnType<typeof registerEndpoint>>
      let aliceDelivery: DeliveryView
      let bobEndpoint: Awaited<ReturnType<typeof registerEndpoint>>

      beforeAll(async () => {
        alice = await makeAccount(server, { name: "Alice Ltd" })
        bob = await makeAccount(server, { name: "Bob Ltd", keys: { reader: ["leads:read"] } })
        // Bob listens to the same event type: he must still never hear of Alice's leads.
        bobEndpoint = await registerEndpoint(bob, ["lead.created"])
        const made = await makeDelivery(alice)
        aliceEndpoint = made.endpoint
        aliceDelivery = made.delivery
        aliceLead = await readLead(alice, made.lead.id)
      })

      const bobCalls = (method: string, path: string, json?: unknown) =>
        call(server, method, path, { auth: bob.ownerKey, ...(json === undefined ? {} : { json }) })

      it.each([
        ["GET", undefined],
        ["PATCH", { status: "lost", name: "Taken over", tags: ["pwned"] }],
        ["DELETE", undefined]
      ] as const)(
        "%s /api/v1/leads/{id} of another account is 404, as for an id never issued",
        async (method, json) => {
          const reply = await bobCalls(method, `/api/v1/leads/${aliceLead.id}`, json)
          expect(reply.status).toBe(404)
          expect(reply.body).toEqual(notFound("lead", aliceLead.id))

          const never = unknownLeadId()
          const neverReply = await bobCalls(method, `/api/v1/leads/${never}`, json)
          expect(neverReply.status).toBe(404)
          expect(neverReply.text.replace(never, aliceLead.id)).toBe(reply.text)

          expect(await readLead(alice, aliceLead.id)).toEqual(aliceLead)
        }
      )

      it("checks the scope before looking the lead up, so a 403 does not reveal it either", async () => {
        const reader = bob.keys.reader!.apiKey
        const reply = await call(server, "DELETE", `/api/v1/leads/${aliceLead.id}`, { auth: reader })
        expect(reply.status).toBe(403)
        expect(reply.body).toEqual(forbidden("leads:write"))
        const neverReply = await call(server, "DELETE", `/api/v1/leads/${unknownLeadId()}`, { auth: reader })
        expect(neverReply.text).toBe(reply.text)
        expect(await readLead(alice, aliceLead.id)).toEqual(aliceLead)
      })

      it("DELETE /api/webhooks/endpoints?id= of another account is 404 and the endpoint stays", async () => {
        const reply = await bobCalls("DELETE", `/api/webhooks/endpoints?id=${aliceEndpoint.id}`)
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual(notFound("webhook endpoint", aliceEndpoint.id))

        const never = crypto.randomUUID()
        const neverReply = await bobCalls("DELETE", `/api/webhooks/endpoints?id=${never}`)
        expect(neverReply.text.replace(never, aliceEndpoint.id)).toBe(reply.text)

        expect(await listedIds(alice, "/api/webhooks/endpoints", "endpoints")).toContain(aliceEndpoint.id)
      })

      it("GET /api/webhooks/deliveries?endpoint_id= of another account finds nothing, as for an id never issued", async () => {
        // A filter rather than a lookup: the server answers an empty page (not 404) both for an
        // endpoint of another account and for one that never existed, so the answer reveals nothing.
        const reply = await bobCalls("GET", `/api/webhooks/deliveries?endpoint_id=${aliceEndpoint.id}`)
        expect(reply.status).toBe(200)
        expect(reply.body).toEqual({
          deliveries: [],
          meta: { limit: 50, offset: 0, total: 0, has_more: false, next_offset: null }
        })
        const neverReply = await bobCalls("GET", `/api/webhooks/deliveries?endpoint_id=${crypto.randomUUID()}`)
        expect(neverReply.text).toBe(reply.text)
      })

      it("POST /api/webhooks/deliveries/redeliver?id= of another account is 404 and sends nothing", async () => {
        const reply = await bobCalls("POST", `/api/webhooks/deliveries/redeliver?id=${aliceDelivery.id}`)
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual(notFound("delivery", aliceDelivery.id))

        const never = `dlv_${unknownLeadId().slice(3)}`
        const neverReply = await bobCalls("POST", `/api/webhooks/deliveries/redeliver?id=${never}`)
        expect(neverReply.text.replace(never, aliceDelivery.id)).toBe(reply.text)

        // Give a wrongly queued redelivery time to go out before checking that none did.
        await sleep(500)
        expect(aliceEndpoint.endpoint.requests()).toHaveLength(1)
        const [after] = await deliveriesOf(alice, `?endpoint_id=${aliceEndpoint.id}`)
        expect(after).toEqual(aliceDelivery)
      })

      it("never lists another account's leads, endpoints, deliveries or events", async () => {
        const bobLead = await createLead(bob)
        await bobEndpoint.endpoint.waitFor(1)

        expect(await listedIds(bob, "/api/v1/leads", "leads")).toEqual([bobLead.id])
        expect(await listedIds(bob, "/api/webhooks/endpoints", "endpoints")).toEqual([bobEndpoint.id])
        const bobDeliveries = await deliveriesOf(bob)
        expect(bobDeliveries.map((delivery) => delivery.id)).not.toContain(aliceDelivery.id)
        expect(bobDeliveries.map((delivery) => delivery.event_id)).not.toContain(aliceDelivery.event_id)
        // Bob's receiver heard of his own lead only, although Alice's lead.created came first.
        expect(bobEndpoint.endpoint.requests().map((request) => JSON.parse(request.body).data.id)).toEqual([bobLead.id])
      })

      it("scopes Idempotency-Keys to the account: the same key from another account is not a replay", async () => {
        const key = `shared-${crypto.randomUUID()}`
        const json = { name: "Same Body", phone: nextPhone() }
        const first = await call(server, "POST", "/api/v1/leads", {
          auth: alice.ownerKey,
          json,
          headers: { "idempotency-key": key }
        })
        expect(first.status).toBe(201)
        const second = await call(server, "POST", "/api/v1/leads", {
          auth: bob.ownerKey,
          json,
          headers: { "idempotency-key": key }
        })
        expect(second.status).toBe(201)
        expect(second.headers.get("idempotent-replayed")).toBeNull()
        expect(second.body.id).not.toBe(first.body.id)
        expect(await listedIds(bob, "/api/v1/leads", "leads")).toContain(second.body.id)
      })

      it("refuses references to another account's users", async () => {
        const bobLead = await createLead(bob)
        const before = await readLead(bob, bobLead.id)
        const reply = await bobCalls("PATCH", `/api/v1/leads/${bobLead.id}`, { assigned_user_id: alice.ownerUserId })
        expect(reply.status).toBe(400)
        expect(reply.body).toEqual({
          error: "assigned_user_id is not a user of this account",
          code: "validation_error",
          details: [{ path: "assigned_user_id", message: "no such user in this account" }]
        })
        expect(await readLead(bob, bobLead.id)).toEqual(before)

        // The operator API holds the same line: a key of Alice's account cannot belong to Bob's user.
        const bobUser = await makeUser(server, bob.accountId, "member")
        const key = await call(server, "POST", `/admin/v1/accounts/${alice.accountId}/keys`, {
          auth: server.adminToken,
          json: { user_id: bobUser }
        })
        expect(key.status).toBe(404)
        expect(key.body).toEqual(notFound("user", bobUser))
      })
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
          const request = await route.request(account)
          const reply = await send(route, request, undefined)
          expectUnauthorized(reply, route.path.startsWith("/admin/") ? ADMIN_UNAUTHORIZED : UNAUTHORIZED)
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
          const request = await route.request(account)
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
      const READ_ONLY = ["id", "account_id", "created_at", "updated_at"] as const
      let account: AccountFixture
      let other: AccountFixture

      beforeAll(async () => {
        account = await makeAccount(server)
        other = await makeAccount(server)
      })

      const total = async () =>
        (await call(server, "GET", "/api/v1/leads?limit=1", { auth: account.ownerKey })).body.meta.total as number
      const forged: Record<(typeof READ_ONLY)[number], string> = {
        id: "ld_00000000000000000000000000",
        account_id: "00000000-0000-4000-8000-000000000000",
        created_at: "2000-01-01T00:00:00.000Z",
        updated_at: "2000-01-01T00:00:00.000Z"
      }

      it.each(READ_ONLY)("refuses %s in a create body and creates nothing", async (field) => {
        const before = await total()
        const reply = await call(server, "POST", "/api/v1/leads", {
          auth: account.ownerKey,
          json: { name: "Mass Assigned", phone: nextPhone(), [field]: forged[field] }
        })
        expect(reply.status).toBe(400)
        expect(reply.body).toEqual({
          error: `Invalid request body: ${field}: Expected no excess property`,
          code: "validation_error",
          details: [excess(field)]
        })
        expect(await total()).toBe(before)
      })

      it.each(READ_ONLY)("refuses %s in a PATCH body and leaves the lead as it was", async (field) => {
        const lead = await createLead(account)
        const before = await readLead(account, lead.id)
        const reply = await call(server, "PATCH", `/api/v1/leads/${lead.id}`, {
          auth: account.ownerKey,
          json: { name: "Renamed", [field]: forged[field] }
        })
        expect(reply.status).toBe(400)
        expect(reply.body.details).toEqual([excess(field)])
        expect(await readLead(account, lead.id)).toEqual(before)
      })

      it("names every read-only field at once, on create and on PATCH", async () => {
        const lead = await createLead(account)
        const before = await readLead(account, lead.id)
        for (const [method, path] of [
          ["POST", "/api/v1/leads"],
          ["PATCH", `/api/v1/leads/${lead.id}`]
        ] as const) {
          const reply = await call(server, method, path, {
            auth: account.ownerKey,
            json: { name: "All At Once", phone: nextPhone(), ...forged }
          })
          expect(reply.status, method).toBe(400)
          expect(reply.body.code).toBe("validation_error")
          expect([...reply.body.details].sort((a, b) => a.path.localeCompare(b.path))).toEqual(
            [...READ_ONLY].sort().map(excess)
          )
        }
        expect(await readLead(account, lead.id)).toEqual(before)
      })

      it("refuses a caller-chosen webhook secret, id, owner or state at registration", async () => {
        const reply = await call(server, "POST", "/api/webhooks/endpoints", {
          auth: account.ownerKey,
          json: {
            url: receiver.endpoint("/chosen-secret").url,
            events: ["order.created"],
            secret: "whsec_chosen",
            id: crypto.randomUUID(),
            enabled: false,
            account_id: other.accountId,
            created_at: forged.created_at
          }
        })
        expect(reply.status).toBe(400)
        expect(reply.body.details.map((detail: { path: string }) => detail.path).sort()).toEqual(
          ["account_id", "created_at", "enabled", "id", "secret"].sort()
        )
        expect(await listedIds(account, "/api/webhooks/endpoints", "endpoints")).toEqual([])
      })

      it("answers a lead with exactly the contract's fields: no account id or other internals", async () => {
        const lead = await createLead(account, { tags: ["vip"], attributes: { plan: "gold" } })
        expect(Object.keys(lead).sort()).toEqual(LEAD_KEYS)
        expect(Object.keys(await readLead(account, lead.id)).sort()).toEqual(LEAD_KEYS)
        const list = await call(server, "GET", "/api/v1/leads", { auth: account.ownerKey })
        for (const listed of list.body.leads) expect(Object.keys(listed).sort()).toEqual(LEAD_KEYS)
      })

      it("shows a webhook secret in the registration answer only: not in lists, logs, deletions or deliveries", async () => {
        const { endpoint, lead, delivery } = await makeDelivery(account)
        const texts = [
          (await call(server, "GET", "/api/webhooks/endpoints", { auth: account.ownerKey })).text,
          (await call(server, "GET", "/api/webhooks/deliveries", { auth: account.ownerKey })).text,
          (
            await call(server, "POST", `/api/webhooks/deliveries/redeliver?id=${delivery.id}`, {
              auth: account.ownerKey
            })
          ).text,
          (await call(server, "GET", `/api/v1/leads/${lead.id}`, { auth: account.ownerKey })).text,
          (await call(server, "GET", "/api/me", { auth: account.ownerKey })).text,
          ...endpoint.endpoint.requests().map((request) => request.body),
          (await call(server, "DELETE", `/api/webhooks/endpoints?id=${endpoint.id}`, { auth: account.ownerKey })).text
        ]
        expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
        for (const text of texts) {
          expect(text).not.toContain(endpoint.secret)
          expect(text).not.toContain("whsec_")
          expect(text).not.toContain('"secret"')
        }
      })

      it("never shows an API key again after issuing it, nor its hash", async () => {
        const key = await makeKey(server, account.accountId, { name: "shown once", scopes: ["leads:read"] })
        const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key.apiKey)))
        const listing = await call(server, "GET", `/admin/v1/accounts/${account.accountId}/keys`, {
          auth: server.adminToken
        })
        expect(listing.status).toBe(200)
        const me = await call(server, "GET", "/api/me", { auth: key.apiKey })
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

      it("never answers with another account's data, on any route that reads", async () => {
        const { endpoint, lead, delivery } = await makeDelivery(other)
        const secrets = [other.accountId, other.ownerUserId, lead.id, lead.phone, endpoint.id, delivery.id]
        for (const path of [
          "/api/me",
          "/api/usage",
          "/api/v1/leads?limit=100",
          "/api/webhooks/endpoints?limit=100",
          "/api/webhooks/deliveries?limit=100"
        ]) {
          const reply = await call(server, "GET", path, { auth: account.ownerKey })
          expect(reply.status, path).toBe(200)
          for (const secret of secrets) expect(reply.text, `${path} shows ${secret}`).not.toContain(secret)
        }
      })
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

      it.each(["/api/v1/leads", "/api/webhooks/endpoints", "/api/webhooks/deliveries"])(
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

      /** Attributes that serialise to exactly `bytes` bytes of JSON. */
      const attributesOf = (bytes: number) => ({ a: "x".repeat(bytes - JSON.stringify({ a: "" }).length) })

      it("takes attributes of 16 KiB and refuses 16 KiB + 1 byte, on create and on PATCH", async () => {
        const lead = await createLead(account, { attributes: attributesOf(16 * 1024) })
        const before = await readLead(account, lead.id)
        const refusal = {
          error: "Invalid request body: attributes: attributes must be at most 16 KiB of JSON",
          code: "validation_error",
          details: [{ path: "attributes", message: "attributes must be at most 16 KiB of JSON" }]
        }
        const created = await call(server, "POST", "/api/v1/leads", {
          auth: account.ownerKey,
          json: { name: "Too Much", phone: nextPhone(), attributes: attributesOf(16 * 1024 + 1) }
        })
        expect(created.status).toBe(400)
        expect(created.body).toEqual(refusal)
        const patched = await call(server, "PATCH", `/api/v1/leads/${lead.id}`, {
          auth: account.ownerKey,
          json: { attributes: attributesOf(16 * 1024 + 1) }
        })
        expect(patched.status).toBe(400)
        expect(patched.body).toEqual(refusal)
        expect(await readLead(account, lead.id)).toEqual(before)
      })

      it.each([
        ["51 tags", { tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, "tags", "at most 50 tags"],
        ["a 65-character tag", { tags: ["x".repeat(65)] }, "tags.0", "a tag must be at most 64 characters"],
        ["a 201-character name", { name: "x".repeat(201) }, "name", "name must be at most 200 characters"],
        [
          "a 255-character email",
          { email: `${"a".repeat(243)}@example.com` },
          "email",
          "email must be at most 254 characters"
        ]
      ])("refuses %s", async (_, fields, path, message) => {
        const reply = await call(server, "POST", "/api/v1/leads", {
          auth: account.ownerKey,
          json: { name: "Limits", phone: nextPhone(), ...fields }
        })
        expect(reply.status).toBe(400)
        expect(reply.body).toEqual({
          error: `Invalid request body: ${path}: ${message}`,
          code: "validation_error",
          details: [{ path, message }]
        })
      })

      it("takes exactly 50 tags of 64 characters", async () => {
        const tags = Array.from({ length: 50 }, (_, i) => `${i}`.padStart(64, "t"))
        const lead = await createLead(account, { tags })
        expect((await readLead(account, lead.id)).tags).toEqual(tags)
      })
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

      const allows = (needs: Needs, scopes: ReadonlyArray<string>) =>
        needs === "any key" || scopes.length === 0 || (needs !== "full access" && needs.some((s) => scopes.includes(s)))
      const requirement = (needs: Exclude<Needs, "any key">) => (needs === "full access" ? "full access" : needs[0])

      const cases = API_ROUTES.flatMap((route) =>
        Object.entries(SCOPE_SETS).map(([set, scopes]) => {
          const allowed = allows(route.needs, scopes)
          return [`${routeName(route)} with ${set}: ${allowed ? route.succeeds : 403}`, route, set, allowed] as const
        })
      )

      it("derives from the contract the key sets each route admits", () => {
        // Spelled out once, so a slip in `allows` cannot hide behind the matrix it generates.
        const admitted = Object.fromEntries(
          API_ROUTES.map((route) => [
            routeName(route),
            cases.filter(([, r, , allowed]) => r === route && allowed).map(([, , set]) => set)
          ])
        )
        const all = Object.keys(SCOPE_SETS)
        const reads = ["leads:read", "leads:write", "all 16 scopes", "full access"]
        const writes = ["leads:write", "all 16 scopes", "full access"]
        expect(admitted).toEqual({
          "GET /api/me": all,
          "GET /api/usage": ["analytics:read", "all 16 scopes", "full access"],
          "GET /api/v1/leads": reads,
          "POST /api/v1/leads": writes,
          "GET /api/v1/leads/{id}": reads,
          "PATCH /api/v1/leads/{id}": writes,
          "DELETE /api/v1/leads/{id}": writes,
          "POST /api/webhooks/endpoints": ["full access"],
          "GET /api/webhooks/endpoints": ["full access"],
          "DELETE /api/webhooks/endpoints": ["full access"],
          "GET /api/webhooks/deliveries": ["full access"],
          "POST /api/webhooks/deliveries/redeliver": ["full access"]
        })
      })

      it.each(cases)("%s", async (_, route, set, allowed) => {
        const request = await route.request(account)
        const reply = await send(route, request, account.keys[set]!.apiKey)
        // API8 wants a request id on every response, the successful ones included.
        expect(reply.headers.get("x-request-id")).toMatch(/^req_[0-9a-z]{26}$/)
        if (allowed) {
          expect(reply.status, reply.text).toBe(route.succeeds)
        } else {
          expect(reply.status).toBe(403)
          expect(reply.body).toEqual(forbidden(requirement(route.needs as Exclude<Needs, "any key">)))
          await request.unchanged?.()
        }
      })

      it.each(ADMIN_ROUTES.map((route) => [routeName(route), route] as const))(
        "%s refuses every API key with 401, full access included",
        async (_, route) => {
          for (const set of ["full access", "all 16 scopes", "leads:write"]) {
            const request = await route.request(account)
            expectUnauthorized(await send(route, request, account.keys[set]!.apiKey), ADMIN_UNAUTHORIZED)
            await request.unchanged?.()
          }
          // The operator token passes, so the refusals above are about the credential.
          const reply = await send(route, await route.request(account), server.adminToken)
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
        ["an unknown admin route", () => ({ method: "GET", path: "/admin/v1/accounts", as: "admin", status: 404 })],
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

      it("documents exactly the routes exercised in this file", () => {
        expect(documented().sort()).toEqual(ALL_ROUTES.map(routeName).sort())
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

import { request as httpRequest } from "node:http"
import { expect } from "vitest"
import type { AccountFixture } from "../Fixtures.ts"
import { call, type Reply } from "../Http.ts"
import { UNAUTHORIZED } from "../internal/wire.ts"
import * as Leads from "../leads/LeadsResource.ts"
import type * as MockReceiver from "../MockReceiver.ts"
import * as Resource from "../Resource.ts"
import type { OwaspItem, SecurityContext } from "../Slice.ts"
import * as Resources from "../Resources.ts"
import type { Target } from "../TestServer.ts"
import * as Webhooks from "../webhooks/WebhooksResource.ts"

/**
 * What the security suite's items share: the target under test (read when a test runs), the
 * context the slices' checks get, the route inventory of the descriptors and a few helpers.
 */
export const makeKit = (
  current: () => Target,
  currentReceiver: () => MockReceiver.MockReceiver | undefined,
  withReceiver: boolean
) => {
  // The target as the tests see it: read at each use, since the suite learns it in its beforeAll.
  const server: Target = {
    get baseUrl() {
      return current().baseUrl
    },
    get adminToken() {
      return current().adminToken
    },
    get whatsappAppSecret() {
      return current().whatsappAppSecret
    },
    get whatsappVerifyToken() {
      return current().whatsappVerifyToken
    }
  }
  const context: SecurityContext = {
    get target() {
      return server
    },
    get receiver() {
      return currentReceiver()
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
      ...Resource.bodyOf(request)
    })

  return {
    server,
    context,
    withReceiver,
    sliceChecks,
    ADMIN_UNAUTHORIZED,
    SCOPES,
    expectUnauthorized,
    createLead,
    makeDelivery,
    unknownLeadId,
    rawCall,
    ALL_ROUTES,
    API_ROUTES,
    ADMIN_ROUTES,
    routeName,
    READS,
    send
  }
}

export type Kit = ReturnType<typeof makeKit>

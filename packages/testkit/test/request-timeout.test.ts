import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LeadsRepo } from "@leadline/core/leads/LeadsRepo"
import * as Services from "@leadline/core/Services"
import { makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as MemoryStores from "../src/memory/MemoryStores.ts"
import * as TestServer from "../src/TestServer.ts"

// The in-memory stores, except that listing leads never answers: a stuck dependency.
const stuckList = Layer.effect(
  LeadsRepo,
  Effect.map(LeadsRepo, (repo) => LeadsRepo.of({ ...repo, list: () => Effect.never }))
)
const app = Services.layer.pipe(Layer.provideMerge(stuckList.pipe(Layer.provideMerge(MemoryStores.layer))))

let server: TestServer.Running

beforeAll(async () => {
  server = await TestServer.start({ app, requestTimeoutSeconds: 1 })
})
afterAll(() => server?.close())

describe("the request timeout", () => {
  it("answers a request stuck past it with a JSON 503, and serves the next requests as usual", async () => {
    const account = await makeAccount(server)
    const started = Date.now()
    const stuck = call(server, "GET", "/api/v1/leads", { auth: account.ownerKey })
    // Other requests are not held up meanwhile.
    const me = await call(server, "GET", "/api/me", { auth: account.ownerKey })
    expect(me.status).toBe(200)
    expect(Date.now() - started).toBeLessThan(900)

    const reply = await stuck
    const elapsed = Date.now() - started
    expect(reply.status).toBe(503)
    expect(reply.body).toEqual({ error: "The request took longer than 1 s", code: "service_unavailable" })
    expect(reply.headers.get("x-request-id")).toMatch(/^req_/)
    expect(elapsed).toBeGreaterThanOrEqual(950)
    expect(elapsed).toBeLessThan(5000)

    const created = await call(server, "POST", "/api/v1/leads", {
      auth: account.ownerKey,
      json: { name: "After the timeout", phone: "+14155550142" }
    })
    expect(created.status).toBe(201)
  })
})

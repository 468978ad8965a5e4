import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAccount, makeKey } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as TestServer from "../src/TestServer.ts"

let server: TestServer.Running

beforeAll(async () => {
  server = await TestServer.start({ rateLimit: { limit: 5, window: "60 seconds" } })
})
afterAll(() => server?.close())

describe("per-key rate limits", () => {
  it("counts down in headers, then answers 429 with Retry-After, and leaves other keys alone", async () => {
    const account = await makeAccount(server)
    const other = await makeAccount(server)
    const sibling = await makeKey(server, account.accountId, { name: "sibling" })

    const remaining: Array<string | null> = []
    for (let i = 0; i < 5; i++) {
      const reply = await call(server, "GET", "/api/me", { auth: account.ownerKey })
      expect(reply.status).toBe(200)
      expect(reply.headers.get("x-ratelimit-limit")).toBe("5")
      expect(Number(reply.headers.get("x-ratelimit-reset"))).toBeGreaterThan(0)
      remaining.push(reply.headers.get("x-ratelimit-remaining"))
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"])

    const refused = await call(server, "GET", "/api/v1/leads", { auth: account.ownerKey })
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({
      error: "Rate limit exceeded: 5 requests per 60 s for this API key",
      code: "rate_limited"
    })
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0")
    expect(refused.headers.get("x-request-id")).toMatch(/^req_/)

    // Another key of the same account and another account keep their own budgets.
    expect((await call(server, "GET", "/api/me", { auth: sibling.apiKey })).headers.get("x-ratelimit-remaining")).toBe(
      "4"
    )
    const elsewhere = await call(server, "GET", "/api/me", { auth: other.ownerKey })
    expect(elsewhere.status).toBe(200)
    expect(elsewhere.headers.get("x-ratelimit-remaining")).toBe("4")
  })

  it("counts errors against the key too (with the headers on them), and unauthenticated requests against none", async () => {
    const account = await makeAccount(server)
    const missing = await call(server, "GET", "/api/v1/leads/ld_nope", { auth: account.ownerKey })
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: "No lead with id ld_nope", code: "not_found" })
    expect(missing.headers.get("x-ratelimit-remaining")).toBe("4")
    const next = await call(server, "GET", "/api/me", { auth: account.ownerKey })
    expect(next.headers.get("x-ratelimit-remaining")).toBe("3")
    const anonymous = await call(server, "GET", "/api/me")
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("x-ratelimit-limit")).toBeNull()
  })

  it("gives the budget back when the window ends", async () => {
    const short = await TestServer.start({ rateLimit: { limit: 2, window: "1 second" } })
    try {
      const account = await makeAccount(short)
      const me = async () => (await call(short, "GET", "/api/me", { auth: account.ownerKey })).status
      expect([await me(), await me(), await me()]).toEqual([200, 200, 429])
      // The window is counted on the server's clock: moving it on ends the window without waiting.
      short.clock.advance("1 second")
      expect(await me()).toBe(200)
    } finally {
      await short.close()
    }
  })
})

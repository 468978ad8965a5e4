import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAgent } from "../src/agents/AgentsResource.ts"
import { makeAccount, makeKey } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * The AI simulation's own per-key limit (docs/contract-commerce-ai.md §6): on even where the general limit
 * is off (as here), since each call may cost money; counted per key.
 */
describe("the simulation's rate limit", () => {
  let server: TestServer.Running
  let account: Awaited<ReturnType<typeof makeAccount>>
  let agentId: string
  beforeAll(async () => {
    server = await TestServer.start({ simulationRateLimit: { limit: 2, window: "1 minute" } })
    account = await makeAccount(server)
    agentId = (await createAgent(server, account.ownerKey)).id
  })
  afterAll(() => server?.close())

  const simulate = (key: string) =>
    call(server, "POST", "/api/v1/ai/simulate", { auth: key, json: { agent_id: agentId, message: "Hello?" } })

  it("answers 429 past the limit of the key, with Retry-After, while another key still simulates", async () => {
    const statuses = [(await simulate(account.ownerKey)).status, (await simulate(account.ownerKey)).status]
    const refused = await simulate(account.ownerKey)
    expect([...statuses, refused.status]).toEqual([200, 200, 429])
    expect(refused.body).toEqual({
      error: "Rate limit exceeded: 2 simulations per 60 s for this API key",
      code: "rate_limited"
    })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    // Other routes are not counted against it.
    expect((await call(server, "GET", "/api/v1/agents", { auth: account.ownerKey })).status).toBe(200)
    const other = (await makeKey(server, account.accountId, { scopes: ["ai:use"] })).apiKey
    expect((await simulate(other)).status).toBe(200)
  })
})

import { afterAll, describe, expect, it } from "vitest"
import * as ServerProcess from "./support/ServerProcess.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/**
 * The WhatsApp webhook's per-address budget of refused requests as the server reads it from its
 * environment (docs/contract-messaging.md §6.1): `WHATSAPP_WEBHOOK_RATE_LIMIT` refusals a minute,
 * each client told apart behind the proxies of `LEADLINE_TRUSTED_PROXIES` (here the test itself).
 */
describe("WHATSAPP_WEBHOOK_RATE_LIMIT and LEADLINE_TRUSTED_PROXIES", () => {
  it("refuse an address's third forged webhook with 429, counting each forwarded client on its own", async () => {
    const dataDir = ServerProcess.tempDataDir()
    const server = await ServerProcess.start({
      dataDir,
      env: { WHATSAPP_WEBHOOK_RATE_LIMIT: "2", LEADLINE_TRUSTED_PROXIES: "127.0.0.1" }
    })
    cleanups.push(
      () => ServerProcess.removeDir(dataDir),
      () => server.stop()
    )
    const forged = (client: string) =>
      fetch(`${server.baseUrl}/webhooks/whatsapp`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": client },
        body: "{}"
      })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await forged("198.51.100.1")).status)
    expect(statuses).toEqual([401, 401, 429])
    const limited = await forged("198.51.100.1")
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/)
    expect(await limited.json()).toEqual({
      error: "Too many refused requests from this address: 2 per 60 s",
      code: "rate_limited"
    })
    expect((await forged("198.51.100.2")).status).toBe(401)
  })
})

import { afterAll, describe, expect, it } from "vitest"
import { makeAccount, nextPhone } from "@leadline/testkit/Fixtures"
import { call } from "@leadline/testkit/Http"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as Setups from "./support/Setups.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const setups = Setups.databases(cleanups)

describe.each(setups)("the reference server on %s", (_name, setup) => {
  it("keeps what it wrote across a restart", async () => {
    const { dataDir, env } = await setup()
    const first = await ServerProcess.start({ dataDir, env })
    cleanups.push(() => first.stop())
    const account = await makeAccount(first, { keys: { reader: ["leads:read"] } })
    const created = await call(first, "POST", "/api/v1/leads", {
      auth: account.ownerKey,
      json: { name: "Survivor", phone: nextPhone() },
      headers: { "idempotency-key": "restart-1" }
    })
    expect(created.status).toBe(201)
    expect(await first.stop("SIGTERM")).toBe(0)

    const second = await ServerProcess.start({ dataDir, env })
    cleanups.push(() => second.stop())
    const read = await call(second, "GET", `/api/v1/leads/${created.body.id}`, { auth: account.keys.reader!.apiKey })
    expect(read.status).toBe(200)
    expect(read.text).toBe(created.text)
    const replay = await call(second, "POST", "/api/v1/leads", {
      auth: account.ownerKey,
      json: { name: "Survivor", phone: created.body.phone },
      headers: { "idempotency-key": "restart-1" }
    })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.text).toBe(created.text)
    expect(second.adminToken).toBe(first.adminToken)
  })
})

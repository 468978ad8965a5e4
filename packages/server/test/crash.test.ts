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

describe.each(setups)("kill -9 under concurrent creates, on %s", (_name, setup) => {
  // Two server processes on the embedded database take about 20 s alone, more beside the other process tests.
  it("loses no acknowledged lead and leaves no lead without its event, nor an event without its lead", async () => {
    const { dataDir, env, query } = await setup()
    const first = await ServerProcess.start({ dataDir, env })
    // Stopped by the cleanups too (stop is idempotent), so a failed assertion leaves no server running.
    cleanups.push(() => first.stop("SIGKILL"))
    const account = await makeAccount(first)

    const acknowledged = new Map<string, string>() // idempotency key -> lead id
    const attempted: Array<{ key: string; body: { name: string; phone: string } }> = []
    let crashed = false
    const writer = async (worker: number) => {
      for (let i = 0; !crashed; i++) {
        const request = { key: `crash-${worker}-${i}`, body: { name: `Lead ${worker}.${i}`, phone: nextPhone() } }
        attempted.push(request)
        try {
          const reply = await call(first, "POST", "/api/v1/leads", {
            auth: account.ownerKey,
            json: request.body,
            headers: { "idempotency-key": request.key }
          })
          if (reply.status === 201) acknowledged.set(request.key, reply.body.id)
          else throw new Error(`unexpected ${reply.status}: ${reply.text}`)
        } catch (error) {
          if (!crashed) throw error
        }
      }
    }
    const writers = Array.from({ length: 8 }, (_, worker) => writer(worker))
    await new Promise((resolve) => setTimeout(resolve, 1500))
    crashed = true
    expect(await first.stop("SIGKILL")).toBe("SIGKILL")
    await Promise.all(writers)
    expect(acknowledged.size).toBeGreaterThan(20)

    const second = await ServerProcess.start({ dataDir, env })
    cleanups.push(() => second.stop())
    for (const id of acknowledged.values()) {
      const reply = await call(second, "GET", `/api/v1/leads/${id}`, { auth: account.ownerKey })
      expect(reply.status, id).toBe(200)
    }
    // Retrying what was in flight, as a client would (same key, same body), is safe: a create that
    // committed but was never acknowledged is replayed, one that never committed is made now.
    let replayed = 0
    for (const { key, body } of attempted.filter(({ key }) => !acknowledged.has(key))) {
      const retry = await call(second, "POST", "/api/v1/leads", {
        auth: account.ownerKey,
        json: body,
        headers: { "idempotency-key": key }
      })
      expect(retry.status, retry.text).toBe(201)
      expect(retry.body.phone).toBe(body.phone)
      if (retry.headers.get("idempotent-replayed") === "true") replayed++
      else expect(retry.headers.get("idempotent-replayed")).toBeNull()
    }
    // Each acknowledged key replays the lead it was answered with.
    for (const { key, body } of attempted.filter(({ key }) => acknowledged.has(key)).slice(0, 10)) {
      const again = await call(second, "POST", "/api/v1/leads", {
        auth: account.ownerKey,
        json: body,
        headers: { "idempotency-key": key }
      })
      expect([again.status, again.headers.get("idempotent-replayed"), again.body.id]).toEqual([
        201,
        "true",
        acknowledged.get(key)
      ])
    }
    const total = (await call(second, "GET", "/api/v1/leads?limit=1", { auth: account.ownerKey })).body.meta.total
    expect(await second.stop()).toBe(0)

    const [counts] = await query<{ leads: number; events: number; orphans: number; bare: number; counted: number }>(`
      SELECT
        (SELECT count(*)::int FROM leads) AS leads,
        (SELECT count(*)::int FROM events WHERE type = 'lead.created') AS events,
        (SELECT count(*)::int FROM events e WHERE e.type = 'lead.created'
           AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.id = e.payload->'data'->>'id')) AS orphans,
        (SELECT count(*)::int FROM leads l WHERE NOT EXISTS (SELECT 1 FROM events e
           WHERE e.type = 'lead.created' AND e.payload->'data'->>'id' = l.id)) AS bare,
        (SELECT coalesce(sum(total), 0)::int FROM lead_counts) AS counted`)
    expect(counts).toEqual({ leads: total, events: total, orphans: 0, bare: 0, counted: total })
    // Exactly one lead per key: every attempt now has its lead, and no key made two.
    expect(total).toBe(attempted.length)
    const [phones] = await query<{ distinct_phones: number }>(
      "SELECT count(DISTINCT phone)::int AS distinct_phones FROM leads"
    )
    expect(phones!.distinct_phones).toBe(attempted.length)
    console.info(
      `crash: ${acknowledged.size} acknowledged, ${attempted.length - acknowledged.size} in flight, ${replayed} of them replayed`
    )
  }, 120_000)
})

import { afterAll, describe, expect, it } from "vitest"
import { makeAccount, nextPhone } from "@leadline/testkit/Fixtures"
import { call } from "@leadline/testkit/Http"
import * as MockReceiver from "@leadline/testkit/MockReceiver"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as Setups from "./support/Setups.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const LEADS = 40

describe.each(Setups.databases(cleanups))("kill -9 of the webhook worker, on %s", (name, setup) => {
  // On PostgreSQL the worker runs as its own process (`leadline worker`); the embedded
  // database belongs to the server, so there the server (and the worker in it) is killed.
  const separateWorker = name === "PostgreSQL"

  it("still delivers every event at least once, with its original event id", async () => {
    const { dataDir, env: databaseEnv, query } = await setup()
    const env = {
      ...databaseEnv,
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      WEBHOOK_LEASE_SECONDS: "11",
      WEBHOOK_POLL_INTERVAL_MS: "200",
      WEBHOOK_CONCURRENCY: "4",
      ...(separateWorker ? { WEBHOOK_WORKER_ENABLED: "false" } : {})
    }
    const receiver = await MockReceiver.start()
    cleanups.push(() => receiver.close())
    const endpoint = receiver.endpoint("/crash")
    // Slow answers keep deliveries in flight when the worker dies.
    endpoint.respond(...Array.from({ length: LEADS * 2 }, () => ({ delayMs: 150 })))

    let server = await ServerProcess.start({ dataDir, env })
    cleanups.push(() => server.stop())
    let worker = separateWorker ? await ServerProcess.startWorker({ dataDir, env }) : undefined
    cleanups.push(() => worker?.stop())
    const account = await makeAccount(server)
    const registered = await call(server, "POST", "/api/webhooks/endpoints", {
      auth: account.ownerKey,
      json: { url: endpoint.url, events: ["lead.created"] }
    })
    endpoint.setSecret(registered.body.secret)
    for (let i = 0; i < LEADS; i++) {
      const reply = await call(server, "POST", "/api/v1/leads", {
        auth: account.ownerKey,
        json: { name: `Lead ${i}`, phone: nextPhone() }
      })
      expect(reply.status).toBe(201)
    }

    await endpoint.waitFor(5, 20_000)
    if (worker !== undefined) {
      expect(await worker.stop("SIGKILL")).toBe("SIGKILL")
      worker = await ServerProcess.startWorker({ dataDir, env })
    } else {
      expect(await server.stop("SIGKILL")).toBe("SIGKILL")
      server = await ServerProcess.start({ dataDir, env })
    }
    const before = endpoint.requests().length
    expect(before).toBeLessThan(LEADS)

    const eventIds = async () => new Set(endpoint.requests().map((request) => request.headers["x-service-event-id"]))
    const deadline = Date.now() + 45_000
    while ((await eventIds()).size < LEADS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const received = await eventIds()
    expect(received.size).toBe(LEADS)
    expect(endpoint.requests().every((request) => request.verified.service && request.verified.standard)).toBe(true)

    // A delivery sent just before the kill but never recorded is sent again once its lease ends.
    const pending = () =>
      call(server, "GET", "/api/webhooks/deliveries?status=pending&limit=1", { auth: account.ownerKey }).then(
        (reply) => reply.body.meta.total as number
      )
    for (let waited = 0; (await pending()) > 0 && waited < 30_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    expect(await pending()).toBe(0)
    await worker?.stop()
    expect(await server.stop()).toBe(0)
    const events = await query<{ id: string }>("SELECT id FROM events WHERE type = 'lead.created'")
    expect(new Set(events.map((event) => event.id))).toEqual(received)
    const [undelivered] = await query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'delivered'"
    )
    expect(undelivered!.n).toBe(0)
  }, 120_000)
})

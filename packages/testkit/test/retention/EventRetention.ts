import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { type AccountFixture, makeAccount, nextPhone } from "../../src/Fixtures.ts"
import { call } from "../../src/Http.ts"
import { settled } from "../../src/internal/wire.ts"
import * as MockReceiver from "../../src/MockReceiver.ts"
import * as TestDatabase from "../../src/TestDatabase.ts"
import * as TestServer from "../../src/TestServer.ts"

/**
 * The event log keeps 30 days (docs/contract.md, "Events"): older events go, with their deliveries
 * and attempts, except one a delivery still waits for. The server's clock is moved past the 30 days.
 * Each of TestDatabase.STORES runs in a file of its own (`event-retention.*.test.ts`): ids are
 * minted from a process-wide monotonic clock, and a second server in the process would make its ids
 * from the first one's moved clock.
 */
export const eventRetention = (store: (typeof TestDatabase.STORES)[number]) =>
  describe(`events past their 30 days, on ${store.name}`, () => {
    let database: TestDatabase.TestDatabase | undefined
    let server: TestServer.Running
    let receiver: MockReceiver.MockReceiver
    let account: AccountFixture

    beforeAll(async () => {
      database = store.database === undefined ? undefined : await TestDatabase.make(store.database)
      server = await TestServer.start({
        ...(database === undefined ? {} : { app: SqlApp.layer(database.config) }),
        webhooks: { allowPrivateUrls: true, workerOptions: { pollInterval: "100 millis" } },
        eventPurgeMillis: 100
      })
      receiver = await MockReceiver.start()
      account = await makeAccount(server)
    })
    afterAll(async () => {
      await receiver?.close()
      await server?.close()
      await database?.dispose()
    })

    const register = async (path: string, json: Record<string, unknown> = {}) => {
      const reply = await call(server, "POST", "/api/webhooks/endpoints", {
        auth: account.ownerKey,
        json: { url: receiver.endpoint(path).url, events: ["lead.created"], ...json }
      })
      expect(reply.status, reply.text).toBe(201)
      return reply.body.id as string
    }
    const deliveriesOf = async (endpointId: string) =>
      (await call(server, "GET", `/api/webhooks/deliveries?endpoint_id=${endpointId}`, { auth: account.ownerKey })).body
        .deliveries as Array<{ event_id: string; status: string }>
    const createLead = async () => {
      const reply = await call(server, "POST", "/api/v1/leads", {
        auth: account.ownerKey,
        json: { name: "Kept a while", phone: nextPhone() }
      })
      expect(reply.status).toBe(201)
    }

    it("deletes a delivered event's record after 30 days and keeps one still waiting", async () => {
      const healthy = await register("/retention-ok")
      await createLead()
      const [delivered] = await settled(
        "delivered",
        () => deliveriesOf(healthy),
        (list) => list[0]?.status === "delivered"
      )
      // A receiver that keeps failing on the extended schedule: its delivery waits days between tries.
      receiver.endpoint("/retention-down").respond(...Array.from({ length: 20 }, () => ({ status: 503 })))
      const down = await register("/retention-down", { retry_policy: "extended" })
      await createLead()
      const [waiting] = await settled(
        "tried",
        () => deliveriesOf(down),
        (list) => list.length === 1
      )

      // 29 days on, nothing is old enough.
      server.clock.advance("29 days")
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect((await deliveriesOf(healthy)).map((d) => d.event_id)).toEqual([waiting!.event_id, delivered!.event_id])

      // 31 days on, the first event goes with its delivery. The second stays whole (one of its
      // deliveries still waits), and a new event is kept.
      server.clock.advance("2 days")
      await settled(
        "purged",
        () => deliveriesOf(healthy),
        (list) => list.length === 1
      )
      expect((await deliveriesOf(healthy)).map((d) => d.event_id)).toEqual([waiting!.event_id])
      await createLead()
      const fresh = await settled(
        "queued",
        () => deliveriesOf(healthy),
        (list) => list.length === 2
      )
      expect(fresh[1]!.event_id).toBe(waiting!.event_id)
      const kept = await deliveriesOf(down)
      expect(kept.find((d) => d.event_id === waiting!.event_id)?.status).toBe("pending")
    })
  })

import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Signature from "@leadline/core/webhooks/Signature"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { type AccountFixture, makeAccount, nextPhone } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { settled } from "../src/internal/wire.ts"
import * as MockReceiver from "../src/MockReceiver.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * Keeping an endpoint (docs/contract.md, "Webhooks"): rotating its secret with an overlap in which
 * deliveries carry both signatures, requeueing its failed deliveries, and disabling one that fails
 * every attempt for too long. On memory, PGlite and PostgreSQL (TestDatabase.STORES), each with the
 * worker inside the server and a real receiver.
 */
describe.each(TestDatabase.STORES)("webhook endpoints kept over time, on $name", ({ database: options }) => {
  let database: TestDatabase.TestDatabase | undefined
  let server: TestServer.Running
  let receiver: MockReceiver.MockReceiver
  let account: AccountFixture
  let paths = 0

  beforeAll(async () => {
    database = options === undefined ? undefined : await TestDatabase.make(options)
    server = await TestServer.start({
      ...(database === undefined ? {} : { app: SqlApp.layer(database.config) }),
      webhooks: { allowPrivateUrls: true, workerOptions: { pollInterval: "100 millis", disableAfter: "1 hour" } }
    })
    receiver = await MockReceiver.start()
    account = await makeAccount(server)
  })
  afterAll(async () => {
    await receiver?.close()
    await server?.close()
    await database?.dispose()
  })

  const register = async (events: ReadonlyArray<string>, json: Record<string, unknown> = {}) => {
    const endpoint = receiver.endpoint(`/care-${++paths}`)
    const reply = await call(server, "POST", "/api/webhooks/endpoints", {
      auth: account.ownerKey,
      json: { url: endpoint.url, events, ...json }
    })
    expect(reply.status, reply.text).toBe(201)
    return { endpoint, id: reply.body.id as string, secret: reply.body.secret as string }
  }
  const createLead = async () => {
    const reply = await call(server, "POST", "/api/v1/leads", {
      auth: account.ownerKey,
      json: { name: "Kept", phone: nextPhone() }
    })
    expect(reply.status).toBe(201)
    return reply.body.id as string
  }
  const deliveriesOf = async (endpointId: string) =>
    (
      await call(server, "GET", `/api/webhooks/deliveries?endpoint_id=${endpointId}&limit=100`, {
        auth: account.ownerKey
      })
    ).body.deliveries as Array<{ event_id: string; status: string; attempts: Array<unknown> }>
  /** Which of `secrets` each Standard Webhooks signature of the request verifies with. */
  const signers = async (request: MockReceiver.RecordedRequest, secrets: Record<string, string>) => {
    const signatures = request.headers["webhook-signature"]!.split(" ")
    const names: Array<string> = []
    for (const signature of signatures) {
      for (const [name, secret] of Object.entries(secrets)) {
        const expected = await Signature.signStandard(
          secret,
          request.headers["webhook-id"]!,
          Number(request.headers["webhook-timestamp"]),
          request.body
        )
        if (expected === signature) names.push(name)
      }
    }
    return { count: signatures.length, names }
  }
  const rotate = (id: string, json: unknown) =>
    call(server, "POST", `/api/webhooks/endpoints/rotate-secret?id=${id}`, { auth: account.ownerKey, json })

  describe("secret rotation", () => {
    it("signs with both secrets during the overlap, then with the new one alone", async () => {
      const { endpoint, id, secret: old } = await register(["lead.created"])
      const rotated = await rotate(id, { overlap_seconds: 3600 })
      expect(rotated.status, rotated.text).toBe(200)
      expect(rotated.body.id).toBe(id)
      expect(rotated.body.secret).toMatch(/^whsec_/)
      expect(rotated.body.secret).not.toBe(old)
      const expires = Date.parse(rotated.body.previous_secret_expires_at)
      expect(expires - server.clock.clock.currentTimeMillisUnsafe()).toBeGreaterThan(3590_000)
      expect(expires - server.clock.clock.currentTimeMillisUnsafe()).toBeLessThanOrEqual(3600_000)
      const fresh = rotated.body.secret as string

      await createLead()
      const [during] = await endpoint.waitFor(1)
      expect(await signers(during!, { old, fresh })).toEqual({ count: 2, names: ["fresh", "old"] })
      // The seed's header is one hex signature: the new secret's.
      expect(during!.headers["x-service-signature"]).toBe(await Signature.sign(fresh, during!.body))

      server.clock.advance("61 minutes")
      await createLead()
      const after = (await endpoint.waitFor(2))[1]!
      expect(await signers(after, { old, fresh })).toEqual({ count: 1, names: ["fresh"] })
    })

    it("retires the old secret at once with overlap 0, and keeps only the latest previous one", async () => {
      const { endpoint, id, secret: first } = await register(["lead.created"])
      const second = (await rotate(id, {})).body
      expect(
        Date.parse(second.previous_secret_expires_at) - server.clock.clock.currentTimeMillisUnsafe()
      ).toBeGreaterThan(86_390_000)
      const third = (await rotate(id, { overlap_seconds: 0 })).body
      expect(third.previous_secret_expires_at).toBeNull()
      await createLead()
      const [request] = await endpoint.waitFor(1)
      expect(await signers(request!, { first, second: second.secret, third: third.secret })).toEqual({
        count: 1,
        names: ["third"]
      })
    })

    it.each([
      [{ overlap_seconds: -1 }, "overlap_seconds"],
      [{ overlap_seconds: 604_801 }, "overlap_seconds"],
      [{ overlap_seconds: "a day" }, "overlap_seconds"],
      [{ secret: "whsec_mine" }, "secret"]
    ])("refuses %j with a 400 naming %s and keeps the secret", async (json, path) => {
      const { endpoint, id, secret } = await register(["lead.created"])
      const reply = await rotate(id, json)
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.details.map((detail: { path: string }) => detail.path)).toContain(path)
      await createLead()
      const [request] = await endpoint.waitFor(1)
      expect(await signers(request!, { secret })).toEqual({ count: 1, names: ["secret"] })
    })

    it("answers 404 for an endpoint that is not there or another account's", async () => {
      const other = await makeAccount(server)
      const theirs = await call(server, "POST", "/api/webhooks/endpoints", {
        auth: other.ownerKey,
        json: { url: receiver.endpoint("/theirs").url, events: ["lead.created"] }
      })
      for (const id of [crypto.randomUUID(), theirs.body.id]) {
        const reply = await rotate(id, {})
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual({ error: `No webhook endpoint with id ${id}`, code: "not_found" })
      }
    })
  })

  describe("recovery", () => {
    const recover = (id: string, json: unknown) =>
      call(server, "POST", `/api/webhooks/endpoints/recover?id=${id}`, { auth: account.ownerKey, json })

    it("requeues the failed deliveries since the time given, each lead's in order, once", async () => {
      const { endpoint, id } = await register(["lead.created", "lead.updated"])
      const before = new Date(server.clock.clock.currentTimeMillisUnsafe()).toISOString()
      // Down for both events' four attempts each (one lead: the second waits for the first).
      endpoint.respond(...Array.from({ length: 8 }, () => ({ status: 500 })))
      const lead = await createLead()
      const patched = await call(server, "PATCH", `/api/v1/leads/${lead}`, {
        auth: account.ownerKey,
        json: { status: "contacted" }
      })
      expect(patched.status).toBe(200)
      for (let round = 0; round < 8; round++) {
        await settled(
          "attempted",
          () => Promise.resolve(endpoint.requests().length),
          (n) => n > round
        )
        server.clock.advance("5 seconds")
      }
      const failed = await settled(
        "failed",
        () => deliveriesOf(id),
        (list) => list.length === 2 && list.every((delivery) => delivery.status === "failed")
      )
      expect(failed.every((delivery) => delivery.attempts.length === 4)).toBe(true)

      const future = await recover(id, {
        since: new Date(server.clock.clock.currentTimeMillisUnsafe() + 60_000).toISOString()
      })
      expect(future.status).toBe(400)
      expect(future.body.details.map((detail: { path: string }) => detail.path)).toEqual(["since"])
      const malformed = await recover(id, { since: "yesterday" })
      expect(malformed.status).toBe(400)
      expect(malformed.body.details.map((detail: { path: string }) => detail.path)).toEqual(["since"])
      expect((await recover(crypto.randomUUID(), { since: before })).status).toBe(404)
      expect(endpoint.requests()).toHaveLength(8)

      const recovered = await recover(id, { since: before })
      expect(recovered.status, recovered.text).toBe(200)
      expect(recovered.body).toEqual({ requeued: 2 })
      const delivered = await settled(
        "delivered",
        () => deliveriesOf(id),
        (list) => list.every((delivery) => delivery.status === "delivered")
      )
      expect(delivered.every((delivery) => delivery.attempts.length === 5)).toBe(true)
      const sent = endpoint.requests().slice(8)
      expect(sent.map((request) => JSON.parse(request.body).type)).toEqual(["lead.created", "lead.updated"])
      expect((await recover(id, { since: before })).body).toEqual({ requeued: 0 })
    })
  })

  describe("an endpoint failing for too long", () => {
    it("is disabled after a failure an hour after its first, a success resetting the count; an event says so", async () => {
      const watcher = await register(["webhook_endpoint.disabled"])
      const { endpoint, id } = await register(["lead.created"], { retry_policy: "extended" })
      const listed = async () =>
        (
          await call(server, "GET", "/api/webhooks/endpoints?limit=100", { auth: account.ownerKey })
        ).body.endpoints.find((candidate: { id: string }) => candidate.id === id)
      const attemptsOf = async (n: number) =>
        settled(
          "attempted",
          () => deliveriesOf(id),
          (list) => list.reduce((sum, delivery) => sum + delivery.attempts.length, 0) >= n
        )
      // A failure, then (31 minutes on) its retry succeeds: the endpoint is healthy again.
      endpoint.respond({ status: 503 })
      await createLead()
      await attemptsOf(1)
      server.clock.advance("31 minutes")
      await attemptsOf(2)
      // A new run of failures: 31 minutes into it the endpoint stays (62 since the first failure ever).
      endpoint.respond({ status: 503 }, { status: 503 }, { status: 503 })
      await createLead()
      await attemptsOf(3)
      server.clock.advance("31 minutes")
      await attemptsOf(4)
      expect((await listed()).enabled).toBe(true)
      // An hour into it, the next failure disables it.
      server.clock.advance("31 minutes")
      await attemptsOf(5)
      const disabled = await settled("disabled", listed, (found) => found.enabled === false)
      expect(disabled.enabled).toBe(false)

      const [notice] = await watcher.endpoint.waitFor(1)
      const event = JSON.parse(notice!.body)
      expect(event.type).toBe("webhook_endpoint.disabled")
      expect(event.data).toMatchObject({ id, url: endpoint.url, enabled: false })
      expect(Date.parse(event.data.disabled_at) - Date.parse(event.data.failing_since)).toBeGreaterThanOrEqual(3600_000)
      const logged = await call(server, "GET", "/api/v1/events?type=webhook_endpoint.disabled", {
        auth: account.ownerKey
      })
      expect(logged.status, logged.text).toBe(200)
      expect(logged.body.events.map((entry: { id: string }) => entry.id)).toContain(event.id)

      // Nothing more goes to it: its retry waits unscheduled and new events queue nothing.
      const sent = endpoint.requests().length
      await createLead()
      server.clock.advance("1 day")
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect(endpoint.requests()).toHaveLength(sent)
      // Enabled again, the delivery that waited goes at once (and is answered 200).
      const enabled = await call(server, "PATCH", `/api/webhooks/endpoints?id=${id}`, {
        auth: account.ownerKey,
        json: { enabled: true }
      })
      expect(enabled.body.enabled).toBe(true)
      const delivered = await settled(
        "delivered",
        () => deliveriesOf(id),
        (list) => list.every((delivery) => delivery.status === "delivered")
      )
      expect(delivered).toHaveLength(2)
    })
  })
})

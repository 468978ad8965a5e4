import { connect } from "node:net"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Effect, Stream } from "effect"
import * as Client from "@leadline/http-adapter/Client"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeConversation } from "../src/conversations/ConversationsResource.ts"
import { eventsOf } from "../src/eventlog/EventsResource.ts"
import * as StreamReader from "../src/eventlog/StreamReader.ts"
import { makeAccount, nextPhone } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { postImport, waitForJob } from "../src/leads/LeadJobsContract.ts"
import { createLead } from "../src/leads/LeadsResource.ts"
import * as PrometheusText from "../src/observability/PrometheusText.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"
import { stage, wirings } from "../src/Wirings.ts"

/**
 * `GET /api/v1/stream` (issue 34, docs/contract.md "Stream"), over real HTTP on both wirings: what
 * a key sees, resuming without loss or repeats, heartbeats, the end of a client too far behind, and
 * nothing left behind by connections that come and go. Two servers on one PostgreSQL database
 * (TEST_DATABASE_URL) share the log: a stream resumed on the other server carries on exactly.
 */

// A full collection before each heap reading, so what is left is what is still held.
setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const METRICS_TOKEN = "stream-test-metrics"
const BUFFER = 20

const openStreams = async (target: TestServer.Target) => {
  const reply = await fetch(`${target.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  return PrometheusText.value(PrometheusText.parse(await reply.text()), "leadline_event_streams_open")
}

const waitFor = async (what: string, test: () => Promise<boolean>, timeoutMillis = 10_000) => {
  const deadline = Date.now() + timeoutMillis
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

for (const [name, wire] of wirings) {
  describe(`GET /api/v1/stream ${name}`, () => {
    const staged = stage(wire, { metricsToken: METRICS_TOKEN, stream: { heartbeatMillis: 200, buffer: BUFFER } })

    it("is 401 without a key, and 400 naming a parameter it does not know", async () => {
      const anonymous = await StreamReader.open(staged.server, undefined)
      expect(anonymous.status).toBe(401)
      const typo = await call(staged.server, "GET", "/api/v1/stream?type=lead.craeted", {
        auth: staged.account.ownerKey
      })
      expect(typo.status).toBe(400)
      expect(typo.body.details.map((detail: { path: string }) => detail.path)).toEqual(["type"])
      const unknown = await call(staged.server, "GET", "/api/v1/stream?since=now", { auth: staged.account.ownerKey })
      expect(unknown.status).toBe(400)
      const badId = await StreamReader.open(staged.server, staged.account.ownerKey, { lastEventId: "evt_nope" })
      expect(badId.status).toBe(400)
    })

    it("answers an event stream with proxy headers and heartbeats", async () => {
      const stream = await StreamReader.open(staged.server, staged.account.ownerKey)
      expect(stream.status).toBe(200)
      expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(stream.headers.get("cache-control")).toBe("no-cache")
      expect(stream.headers.get("x-accel-buffering")).toBe("no")
      const heartbeat = await stream.until((frame) => frame.comment === "heartbeat", 2_000)
      expect(heartbeat.raw).toBe(": heartbeat")
      expect(stream.frames[0]!.raw).toBe(": open")
      stream.close()
    })

    it("carries only the events a key may see, each as the event log has it", async () => {
      const account = await makeAccount(staged.server, {
        keys: { leads: ["leads:read"], conversations: ["conversations:read"] }
      })
      const all = await StreamReader.open(staged.server, account.ownerKey)
      const leads = await StreamReader.open(staged.server, account.keys.leads!.apiKey)
      const conversations = await StreamReader.open(staged.server, account.keys.conversations!.apiKey)
      const onlyLeads = await StreamReader.open(staged.server, account.ownerKey, { query: "?type=lead.*" })
      await makeConversation(staged.server, account.ownerKey)
      const received = await all.until((frame) => frame.event === "message.received")
      await conversations.until((frame) => frame.event === "message.received")
      const created = await leads.until((frame) => frame.event === "lead.created")
      await onlyLeads.until((frame) => frame.event === "lead.created")
      // Whatever else comes, the log's own copy of each is what the stream sent.
      const logged = (await eventsOf(staged.server, account.ownerKey)).events
      const envelope = logged.find((event) => event.id === created.id)!
      expect(created.raw).toBe(`id: ${envelope.id}\nevent: lead.created\ndata: ${JSON.stringify(envelope)}`)
      expect(JSON.parse(received.data!)).toEqual(logged.find((event) => event.id === received.id))
      await new Promise((resolve) => setTimeout(resolve, 300))
      const types = (stream: StreamReader.StreamReader) => StreamReader.eventsIn(stream.frames).map((e) => e.type)
      expect(types(leads).every((type) => type.startsWith("lead."))).toBe(true)
      expect(types(onlyLeads).every((type) => type.startsWith("lead."))).toBe(true)
      expect(types(conversations)).toContain("conversation.created")
      expect(types(conversations).every((type) => /^(conversation|message)\./.test(type))).toBe(true)
      expect(types(all)).toEqual(expect.arrayContaining(["lead.created", "conversation.created", "message.received"]))
      const forbidden = await call(staged.server, "GET", "/api/v1/stream?type=message.received", {
        auth: account.keys.leads!.apiKey
      })
      expect(forbidden.status).toBe(403)
      for (const stream of [all, leads, conversations, onlyLeads]) stream.close()
    })

    it("is read by the typed client: each message decoded to its type and envelope", async () => {
      const account = await makeAccount(staged.server)
      const first = await createLead(staged.server, account.ownerKey)
      const second = await createLead(staged.server, account.ownerKey)
      const firstEvent = (await eventsOf(staged.server, account.ownerKey, "?type=lead.created")).events.find(
        (event) => event.data.id === first.id
      )!
      const messages = await Effect.runPromise(
        Effect.gen(function* () {
          const client = yield* Client.makeWithFetch({ baseUrl: staged.server.baseUrl, apiKey: account.ownerKey })
          const stream = yield* client.stream.open({ query: { last_event_id: firstEvent.id }, headers: {} })
          return yield* Stream.runCollect(Stream.take(stream, 1))
        }).pipe(Effect.scoped)
      )
      expect(messages).toHaveLength(1)
      const [message] = messages as unknown as Array<{ id: string; event: string; data: { data: { id: string } } }>
      expect(message!.event).toBe("lead.created")
      expect(message!.data.data.id).toBe(second.id)
    })

    it("resumes after Last-Event-ID (or last_event_id) with nothing lost and nothing twice", async () => {
      const account = await makeAccount(staged.server)
      const first = await StreamReader.open(staged.server, account.ownerKey)
      const before = [
        await createLead(staged.server, account.ownerKey),
        await createLead(staged.server, account.ownerKey)
      ]
      await first.until((frame) => frame.data?.includes(before[1]!.id) === true)
      const last = StreamReader.eventsIn(first.frames).at(-1)!.id
      first.close()
      const missed = [
        await createLead(staged.server, account.ownerKey),
        await createLead(staged.server, account.ownerKey)
      ]
      for (const options of [{ lastEventId: last }, { query: `?last_event_id=${last}` }]) {
        const resumed = await StreamReader.open(staged.server, account.ownerKey, options)
        await resumed.until((frame) => frame.data?.includes(missed[1]!.id) === true)
        await new Promise((resolve) => setTimeout(resolve, 100))
        expect(StreamReader.eventsIn(resumed.frames).map((event) => event.data.id)).toEqual(missed.map((l) => l.id))
        resumed.close()
      }
    })

    it("ends a client too far behind with a reset naming its last event, and it resumes from there", async () => {
      const account = await makeAccount(staged.server)
      const url = new URL(staged.server.baseUrl)
      // A client that stops reading: its socket's buffers fill, then the connection's buffer.
      const socket = connect(Number(url.port), url.hostname)
      socket.write(
        `GET /api/v1/stream HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${account.ownerKey}\r\n\r\n`
      )
      const chunks: Array<Buffer> = []
      socket.on("data", (chunk) => chunks.push(chunk))
      await waitFor("the stream's headers", async () => Buffer.concat(chunks).toString().includes(": open"))
      socket.pause()
      const rows = 1_500
      const padding = "x".repeat(2_000)
      const csv = ["name,phone,attributes"]
      for (let i = 0; i < rows; i++) csv.push(`Lead ${i},${nextPhone()},"{""note"":""${padding}""}"`)
      const job = await postImport(staged.server, account.ownerKey, `${csv.join("\n")}\n`)
      expect(job.status, job.text).toBe(202)
      await waitForJob(staged.server, account.ownerKey, job.body.id, 60_000)
      socket.resume()
      await new Promise<void>((resolve) => socket.on("end", resolve))
      const wire = Buffer.concat(chunks).toString()
      const body = wire.slice(wire.indexOf("\r\n\r\n") + 4)
      const reset = /event: reset\ndata: (.*)\n\n/.exec(body)
      expect(reset, "a reset ends the stream").not.toBeNull()
      const notice = JSON.parse(reset![1]!)
      const ids = [...body.matchAll(/\nid: (evt_[0-9a-z]+)\n/g)].map((match) => match[1]!)
      expect(ids.length).toBeLessThan(rows)
      expect(notice).toEqual({ reason: "too_far_behind", last_event_id: ids.at(-1) })
      expect(body.trimEnd().endsWith("0")).toBe(true)
      // Resumed from the reset's id, every lead of the import comes exactly once in all.
      const resumed = await StreamReader.open(staged.server, account.ownerKey, { lastEventId: notice.last_event_id })
      await waitFor(
        "the rest of the import",
        async () => StreamReader.eventsIn(resumed.frames).length >= rows - ids.length
      )
      await new Promise((resolve) => setTimeout(resolve, 200))
      const all = [...ids, ...StreamReader.eventsIn(resumed.frames).map((event) => event.id)]
      expect(new Set(all).size).toBe(all.length)
      expect(all.length).toBe(rows)
      resumed.close()
    }, 120_000)

    it("leaves no stream open and the heap flat after 1,000 connects and disconnects", async () => {
      const key = staged.account.ownerKey
      const round = async (n: number) => {
        for (let i = 0; i < n; i += 50) {
          const batch = await Promise.all(
            Array.from({ length: Math.min(50, n - i) }, () => StreamReader.open(staged.server, key))
          )
          for (const stream of batch) expect(stream.status).toBe(200)
          for (const stream of batch) stream.close()
        }
      }
      await round(200)
      await waitFor("every stream closed", async () => (await openStreams(staged.server)) === 0)
      gc()
      const heapBefore = process.memoryUsage().heapUsed
      await round(1_000)
      await waitFor("every stream closed", async () => (await openStreams(staged.server)) === 0)
      gc()
      const heapAfter = process.memoryUsage().heapUsed
      // Client and server share this process: 1,000 leaked streams would hold far more than this.
      expect(heapAfter - heapBefore).toBeLessThan(30 * 1024 * 1024)
    }, 120_000)
  })
}

describe("GET /api/v1/stream and the request deadline", () => {
  it("outlives LEADLINE_REQUEST_TIMEOUT_SECONDS: the deadline is for the answer's head", async () => {
    const server = await TestServer.start({ requestTimeoutSeconds: 1, stream: { heartbeatMillis: 200 } })
    try {
      const account = await makeAccount(server)
      const stream = await StreamReader.open(server, account.ownerKey)
      await new Promise((resolve) => setTimeout(resolve, 2_500))
      const lead = await createLead(server, account.ownerKey)
      await stream.until((frame) => frame.data?.includes(lead.id) === true)
      expect(stream.frames.filter((frame) => frame.comment === "heartbeat").length).toBeGreaterThanOrEqual(5)
      stream.close()
    } finally {
      await server.close()
    }
  }, 30_000)
})

describe("GET /api/v1/stream when its server shuts down", () => {
  it("ends at once rather than holding the shutdown for its grace period", async () => {
    const server = await TestServer.start()
    const account = await makeAccount(server)
    const stream = await StreamReader.open(server, account.ownerKey)
    expect(stream.status).toBe(200)
    await stream.until((frame) => frame.comment === "open")
    const started = Date.now()
    await server.close()
    await stream.ended
    expect(Date.now() - started).toBeLessThan(5_000)
  }, 30_000)
})

describe("GET /api/v1/stream on two servers over one PostgreSQL database", () => {
  const postgres = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== ""
  let database: TestDatabase.TestDatabase
  let servers: Array<TestServer.Running> = []
  beforeAll(async () => {
    if (!postgres) return
    database = await TestDatabase.make()
    servers = [
      await TestServer.start({ app: SqlApp.layer(database.config) }),
      await TestServer.start({ app: SqlApp.layer(database.config) })
    ]
  }, 60_000)
  afterAll(async () => {
    for (const server of servers) await server.close()
    await database?.dispose()
  })

  it.skipIf(!postgres)(
    "resumes on the other server without loss or repeats, under concurrent commits",
    async () => {
      const [a, b] = servers as [TestServer.Running, TestServer.Running]
      const account = await makeAccount(a)
      const onA = await StreamReader.open(a, account.ownerKey)
      // Commits race on both servers: ids are made before commit, so they become visible out of id order.
      const writes = (server: TestServer.Running, n: number) =>
        Promise.all(Array.from({ length: n }, () => createLead(server, account.ownerKey)))
      const firstWave = [...(await writes(a, 20)), ...(await writes(b, 20))]
      const wave = Promise.all([writes(a, 30), writes(b, 30)])
      await waitFor("half of the events on A", async () => StreamReader.eventsIn(onA.frames).length >= 50)
      onA.close()
      const seen = StreamReader.eventsIn(onA.frames).map((event) => event.id)
      const secondWave = (await wave).flat()
      const onB = await StreamReader.open(b, account.ownerKey, { lastEventId: seen.at(-1)! })
      const total = firstWave.length + secondWave.length
      await waitFor("every event", async () => seen.length + StreamReader.eventsIn(onB.frames).length >= total)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const all = [...seen, ...StreamReader.eventsIn(onB.frames).map((event) => event.id)]
      expect(new Set(all).size).toBe(all.length)
      const logged = new Set((await eventsOf(a, account.ownerKey, "?limit=100")).events.map((event) => event.id))
      expect(all.length).toBe(total)
      expect(new Set(all)).toEqual(logged)
      onB.close()
    },
    60_000
  )
})

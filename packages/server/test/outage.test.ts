import { afterAll, describe, expect, it } from "vitest"
import { makeAccount, nextPhone } from "@leadline/testkit/Fixtures"
import { call, type Reply } from "@leadline/testkit/Http"
import * as TestDatabase from "@leadline/testkit/TestDatabase"
import * as Postgres from "./support/Postgres.ts"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as TcpProxy from "@leadline/testkit/TcpProxy"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

// Only a database server can go away under a running process; the embedded one lives inside it.
if (Postgres.url !== undefined) {
  const url = Postgres.url
  describe("a PostgreSQL outage", () => {
    it("answers JSON 503 and fails /readyz while the database is away, and recovers without a restart", async () => {
      const database = new URL(url)
      const proxy = await TcpProxy.start({ host: database.hostname, port: Number(database.port || 5432) })
      const schema = await Postgres.freshSchema(url)
      const viaProxy = new URL(schema.databaseUrl)
      viaProxy.host = `127.0.0.1:${proxy.port}`
      const dataDir = ServerProcess.tempDataDir()
      const server = await ServerProcess.start({ dataDir, env: { DATABASE_URL: viaProxy.toString() } })
      cleanups.push(
        () => ServerProcess.removeDir(dataDir),
        schema.drop,
        proxy.close,
        () => server.stop()
      )

      const account = await makeAccount(server)
      const create = () =>
        call(server, "POST", "/api/v1/leads", { auth: account.ownerKey, json: { name: "Outage", phone: nextPhone() } })
      expect((await create()).status).toBe(201)
      expect((await call(server, "GET", "/readyz")).status).toBe(200)

      await proxy.cut()
      const during = [await create(), await call(server, "GET", "/api/v1/leads", { auth: account.ownerKey })]
      for (const reply of during) {
        expect(reply.status).toBe(503)
        expect(reply.body).toEqual({ error: "The database is unreachable; retry shortly", code: "service_unavailable" })
        expect(reply.headers.get("retry-after")).toBe("1")
        expect(reply.headers.get("x-request-id")).toMatch(/^req_/)
      }
      const readiness = await call(server, "GET", "/readyz")
      expect(readiness.status).toBe(503)
      expect(readiness.body.code).toBe("service_unavailable")
      expect((await call(server, "GET", "/healthz")).status).toBe(200)

      await proxy.restore()
      let recovered = await create()
      for (let attempt = 0; recovered.status !== 201 && attempt < 20; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 250))
        recovered = await create()
      }
      expect(recovered.status).toBe(201)
      expect((await call(server, "GET", "/readyz")).status).toBe(200)
      const list = await call(server, "GET", "/api/v1/leads", { auth: account.ownerKey })
      expect(list.body.meta.total).toBe(2)
    })
  })
} else {
  describe("a database outage (embedded PGlite)", () => {
    it("cannot happen: the database lives in the server process, so /readyz stays ready", async () => {
      const dataDir = ServerProcess.tempDataDir()
      const server = await ServerProcess.start({ dataDir })
      cleanups.push(
        () => ServerProcess.removeDir(dataDir),
        () => server.stop()
      )
      expect((await call(server, "GET", "/readyz")).body).toEqual({ status: "ready" })
    })
  })
}

const UNREACHABLE = { error: "The database is unreachable; retry shortly", code: "service_unavailable" }

const expectUnavailable = (reply: Reply) => {
  expect(reply.status).toBe(503)
  expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
  expect(reply.body).toEqual(UNREACHABLE)
  expect(reply.headers.get("retry-after")).toBe("1")
}

const until = async (what: string, done: () => boolean | Promise<boolean>, timeoutMillis = 10_000) => {
  const deadline = Date.now() + timeoutMillis
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// A real shutdown, not a cut connection: the server's sessions get 57P01 admin_shutdown,
// new connections 57P03 or ECONNREFUSED. It needs a cluster of the test's own.
const clusterSupport = TestDatabase.clusterSupport()
if (typeof clusterSupport !== "string") {
  console.log(`outage: stopping and starting a throwaway PostgreSQL cluster (${clusterSupport.bin})`)
  describe("a real PostgreSQL shutdown (pg_ctl stop -m fast on a throwaway cluster)", () => {
    it("answers only JSON 503 while the server is down, logs the outage once, and recovers without a restart", {
      timeout: 60_000
    }, async () => {
      const cluster = await TestDatabase.cluster()
      cleanups.push(cluster.destroy)
      const dataDir = ServerProcess.tempDataDir()
      const server = await ServerProcess.start({ dataDir, env: { DATABASE_URL: cluster.url } })
      cleanups.push(
        () => ServerProcess.removeDir(dataDir),
        () => server.stop()
      )
      const account = await makeAccount(server)
      const create = () =>
        call(server, "POST", "/api/v1/leads", {
          auth: account.ownerKey,
          json: { name: "Shutdown", phone: nextPhone() }
        })
      const list = () => call(server, "GET", "/api/v1/leads", { auth: account.ownerKey })

      // Eight clients keep creating and listing across the whole outage; each reply is filed under
      // the phase in which its request was sent, and the one in which its answer came.
      type Phase = "before" | "stopping" | "down" | "starting" | "up"
      let phase: Phase = "before"
      let running = true
      const sent: Array<{
        readonly phase: Phase
        readonly answeredIn: Phase
        readonly creates: boolean
        readonly reply: Reply | Error
      }> = []
      const sentIn = (wanted: Phase) => sent.filter((entry) => entry.phase === wanted)
      const client = async (n: number) => {
        while (running) {
          const at = phase
          const creates = n % 2 === 0
          const reply = await (creates ? create() : list()).catch((error: Error) => error)
          sent.push({ phase: at, answeredIn: phase, creates, reply })
        }
      }
      const clients = Array.from({ length: 8 }, (_, n) => client(n))

      await until("replies before the outage", () => sentIn("before").length >= 16)
      phase = "stopping"
      const stoppedAt = Date.now()
      await cluster.stop()
      phase = "down"
      const downFor = Date.now()
      await until("replies while PostgreSQL is down", () => sentIn("down").length >= 40)
      const readiness = await call(server, "GET", "/readyz")
      expect(readiness.status).toBe(503)
      expect(readiness.body).toEqual({
        error: expect.stringMatching(/^The database is unreachable/),
        code: "service_unavailable"
      })
      expect(readiness.headers.get("retry-after")).toBe("1")
      const health = await call(server, "GET", "/healthz")
      expect(health.status).toBe(200)
      phase = "starting"
      await cluster.start()
      phase = "up"
      const upAt = Date.now()
      await until("a success after the restart", () =>
        sentIn("up").some((entry) => !(entry.reply instanceof Error) && entry.reply.status < 300)
      )
      const recoveredIn = Date.now() - upAt
      running = false
      await Promise.all(clients)

      const replies = sent.map((entry) => entry.reply)
      expect(replies.filter((reply) => reply instanceof Error)).toEqual([])
      const statuses = (replies as Array<Reply>).map((reply) => reply.status)
      // Never a 500: every reply is a success or the 503 of an unreachable database.
      expect(statuses.filter((status) => ![200, 201, 503].includes(status))).toEqual([])
      for (const reply of replies as Array<Reply>) if (reply.status === 503) expectUnavailable(reply)
      const answeredBefore = sent.filter((entry) => entry.answeredIn === "before")
      expect(answeredBefore.length).toBeGreaterThanOrEqual(16)
      for (const entry of answeredBefore) expect((entry.reply as Reply).status).toBeLessThan(300)
      expect(sentIn("down").map((entry) => (entry.reply as Reply).status)).toEqual(sentIn("down").map(() => 503))

      // The same process, with no restart, answers a burst again; readiness is back.
      const burst = await Promise.all(Array.from({ length: 10 }, create))
      expect(burst.map((reply) => reply.status)).toEqual(burst.map(() => 201))
      expect((await call(server, "GET", "/readyz")).body).toEqual({ status: "ready" })
      // Every lead answered 201 is stored; any other stored lead comes from a create answered 503
      // because the shutdown cut its connection after the commit.
      const answeredCreates = sent.filter((entry) => entry.creates).map((entry) => entry.reply as Reply)
      const createdIds = [...answeredCreates, ...burst].filter((reply) => reply.status === 201).map((r) => r.body.id)
      const storedIds: Array<string> = []
      for (let offset = 0; ; offset += 100) {
        const page = await call(server, "GET", `/api/v1/leads?limit=100&offset=${offset}`, { auth: account.ownerKey })
        expect(page.status).toBe(200)
        storedIds.push(...page.body.leads.map((lead: { id: string }) => lead.id))
        if (!page.body.meta.has_more) break
      }
      expect(createdIds.filter((id) => !storedIds.includes(id))).toEqual([])
      expect(storedIds.length).toBeLessThanOrEqual(
        createdIds.length + answeredCreates.filter((reply) => reply.status === 503).length
      )

      // One warning when the database went away and one line when it came back, however many requests failed.
      const log = server.log()
      expect(log.match(/The database is unreachable \(/g)).toHaveLength(1)
      expect(log.match(/The database is reachable again/g)).toHaveLength(1)
      console.log(
        `outage: ${sent.length} requests (${statuses.filter((s) => s === 503).length} answered 503), ` +
          `stop took ${downFor - stoppedAt} ms, first success ${recoveredIn} ms after the restart, ` +
          `${log.split("\n").length} log lines, ${(log.match(/level=ERROR|"level":"ERROR"|\bERROR\b/g) ?? []).length} ERROR`
      )
    })
  })
} else {
  // Machines without the PostgreSQL server binaries still run the proxy-cut outage above.
  console.log(`outage: no real PostgreSQL shutdown here: ${clusterSupport}`)
}

import { afterAll, describe, expect, it } from "vitest"
import { makeAccount, nextPhone } from "@leadline/testkit/Fixtures"
import { call } from "@leadline/testkit/Http"
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

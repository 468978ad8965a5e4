import { afterAll, describe, expect, it } from "vitest"
import { makeAccount } from "@leadline/testkit/Fixtures"
import { call } from "@leadline/testkit/Http"
import * as TcpProxy from "@leadline/testkit/TcpProxy"
import * as Postgres from "./support/Postgres.ts"
import * as ServerProcess from "./support/ServerProcess.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const redisUrl = process.env.TEST_REDIS_URL === "" ? undefined : process.env.TEST_REDIS_URL

// Two server processes need a database server (the embedded one belongs to one process) and Redis.
if (Postgres.url !== undefined && redisUrl !== undefined) {
  const url = Postgres.url
  describe("rate limits with REDIS_URL", () => {
    it("are shared by every server process", async () => {
      const schema = await Postgres.freshSchema(url)
      cleanups.push(schema.drop)
      const env = {
        DATABASE_URL: schema.databaseUrl,
        REDIS_URL: redisUrl,
        LEADLINE_RATE_LIMIT: "6",
        LEADLINE_ADMIN_TOKEN: "lla_rate_limit_test",
        WHATSAPP_WEBHOOK_RATE_LIMIT: "2",
        // The test is the proxy: each run's webhook client is an address of its own, counted from zero.
        LEADLINE_TRUSTED_PROXIES: "127.0.0.1"
      }
      const servers = []
      for (let i = 0; i < 2; i++) {
        const dataDir = ServerProcess.tempDataDir()
        const server = await ServerProcess.start({ dataDir, env })
        cleanups.push(
          () => ServerProcess.removeDir(dataDir),
          () => server.stop()
        )
        servers.push(server)
      }
      const account = await makeAccount(servers[0]!)
      const statuses = []
      for (let i = 0; i < 6; i++) {
        statuses.push((await call(servers[i % 2]!, "GET", "/api/me", { auth: account.ownerKey })).status)
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200])
      for (const server of servers) {
        const refused = await call(server, "GET", "/api/me", { auth: account.ownerKey })
        expect(refused.status).toBe(429)
        expect(refused.body.code).toBe("rate_limited")
      }
      // The WhatsApp webhook's refusals of one address, one on each server, spend one budget.
      const client = `10.${Array.from({ length: 3 }, () => Math.floor(Math.random() * 256)).join(".")}`
      const forged = (server: ServerProcess.ServerProcess) =>
        fetch(`${server.baseUrl}/webhooks/whatsapp`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-for": client },
          body: "{}"
        }).then((reply) => reply.status)
      const webhook = []
      for (let i = 0; i < 4; i++) webhook.push(await forged(servers[i % 2]!))
      expect(webhook).toEqual([401, 401, 429, 429])
    })
  })

  describe("rate limits when Redis goes away", () => {
    it("let requests through uncounted, with a warning, and count again once it is back", async () => {
      const target = new URL(redisUrl)
      const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) })
      cleanups.push(() => proxy.close())
      const dataDir = ServerProcess.tempDataDir()
      const server = await ServerProcess.start({
        dataDir,
        env: {
          REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
          LEADLINE_RATE_LIMIT: "1000",
          // A key of its own in Redis for every run: the window's count starts at 0.
          LEADLINE_ADMIN_TOKEN: `lla_${Date.now()}`
        }
      })
      cleanups.push(
        () => ServerProcess.removeDir(dataDir),
        () => server.stop()
      )
      const account = await makeAccount(server)
      const me = () => call(server, "GET", "/api/me", { auth: account.ownerKey })
      const counted = await me()
      expect(counted.status).toBe(200)
      expect(counted.headers.get("x-ratelimit-limit")).toBe("1000")

      await proxy.cut()
      const started = Date.now()
      const uncounted = await me()
      expect(uncounted.status).toBe(200)
      expect(uncounted.headers.get("x-ratelimit-limit")).toBeNull()
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(server.log()).toContain("rate limit store failed; letting the request through")

      await proxy.restore()
      let again = await me()
      for (let i = 0; i < 50 && again.headers.get("x-ratelimit-limit") === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        again = await me()
      }
      expect(again.status).toBe(200)
      expect(again.headers.get("x-ratelimit-limit")).toBe("1000")
    }, 60_000)
  })
} else {
  describe("rate limits without Redis", () => {
    it("are counted per process, in memory", async () => {
      const dataDir = ServerProcess.tempDataDir()
      const server = await ServerProcess.start({ dataDir, env: { LEADLINE_RATE_LIMIT: "2" } })
      cleanups.push(
        () => ServerProcess.removeDir(dataDir),
        () => server.stop()
      )
      const account = await makeAccount(server)
      const statuses = []
      for (let i = 0; i < 3; i++)
        statuses.push((await call(server, "GET", "/api/me", { auth: account.ownerKey })).status)
      expect(statuses).toEqual([200, 200, 429])
    })
  })
}

import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as ServerProcess from "./support/ServerProcess.ts"

const CSP = "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

/** How the reference server serves /dashboard, built or not (the page itself: dashboard.browser.test.ts). */
describe("the dashboard's files", () => {
  const dirs: Array<string> = []
  const servers: Array<ServerProcess.ServerProcess> = []
  const startWith = async (dashboardDir: string) => {
    const dataDir = ServerProcess.tempDataDir()
    dirs.push(dataDir)
    const server = await ServerProcess.start({ dataDir, env: { LEADLINE_DASHBOARD_DIR: dashboardDir } })
    servers.push(server)
    return server
  }
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    for (const dir of dirs) ServerProcess.removeDir(dir)
  })

  describe("when built", () => {
    let server: ServerProcess.ServerProcess
    beforeAll(async () => {
      // A stand-in build: what matters here is how files are served, not what they are.
      const dist = ServerProcess.tempDataDir()
      dirs.push(dist)
      mkdirSync(join(dist, "assets"))
      writeFileSync(join(dist, "index.html"), "<!doctype html><title>stand-in</title>")
      writeFileSync(join(dist, "assets", "app.js"), "console.log('app')")
      server = await startWith(dist)
    }, 90_000)

    it("serves index.html for the page and its deep links, with a strict CSP", async () => {
      for (const path of ["/dashboard/", "/dashboard/leads", "/dashboard/keys/deeper"]) {
        const reply = await fetch(`${server.baseUrl}${path}`, { headers: { accept: "text/html" } })
        expect(reply.status, path).toBe(200)
        expect(reply.headers.get("content-type")).toBe("text/html; charset=utf-8")
        expect(reply.headers.get("content-security-policy")).toBe(CSP)
        expect(reply.headers.get("x-content-type-options")).toBe("nosniff")
        expect(await reply.text()).toBe("<!doctype html><title>stand-in</title>")
      }
      const bare = await fetch(`${server.baseUrl}/dashboard`, { redirect: "manual" })
      expect(bare.status).toBe(301)
      expect(bare.headers.get("location")).toBe("/dashboard/")
    })

    it("serves assets with their type and an ETag, and 404s a missing file or a way out of the folder", async () => {
      const asset = await fetch(`${server.baseUrl}/dashboard/assets/app.js`)
      expect(asset.status).toBe(200)
      expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
      expect(await asset.text()).toBe("console.log('app')")
      const etag = asset.headers.get("etag")!
      const again = await fetch(`${server.baseUrl}/dashboard/assets/app.js`, { headers: { "if-none-match": etag } })
      expect(again.status).toBe(304)
      for (const path of [
        "/dashboard/assets/missing.js",
        "/dashboard/..%2f..%2fpackage.json",
        "/dashboard/%2e%2e/admin-token"
      ]) {
        const reply = await fetch(`${server.baseUrl}${path}`, { headers: { accept: "text/html" } })
        expect(reply.status, path).toBe(404)
        expect(await reply.json()).toEqual({ error: "No such route", code: "not_found" })
      }
    })
  })

  it("serves the build npm install made, by default", async () => {
    const dataDir = ServerProcess.tempDataDir()
    dirs.push(dataDir)
    const server = await ServerProcess.start({ dataDir })
    servers.push(server)
    const page = await fetch(`${server.baseUrl}/dashboard/`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const script = /<script type="module" crossorigin src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1]
    expect(script, html).toBeDefined()
    const bundle = await fetch(`${server.baseUrl}${script}`)
    expect(bundle.status).toBe(200)
    expect(bundle.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(await bundle.text()).toContain("Sign in to Leadline")
  }, 90_000)

  it("answers 503 with how to build it when the build is missing, and the API still works", async () => {
    const server = await startWith(join(ServerProcess.tempDataDir(), "no-such-build"))
    const reply = await fetch(`${server.baseUrl}/dashboard/`)
    expect(reply.status).toBe(503)
    expect(reply.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(await reply.text()).toContain("npm run build:dashboard")
    expect(server.log()).toContain("Dashboard not built")
    const me = await fetch(`${server.baseUrl}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Still Works Ltd" })
    })
    expect(me.status).toBe(201)
  }, 90_000)
})

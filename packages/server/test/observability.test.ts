import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { makeAccount } from "@leadline/testkit/Fixtures"
import { call } from "@leadline/testkit/Http"
import * as PrometheusText from "@leadline/testkit/observability/PrometheusText"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as Setups from "./support/Setups.ts"

/**
 * The operator's view of a real server process (issue 15): OTLP traces to a collector only when
 * configured, `/metrics` behind its token, and JSON log lines that carry a request's id.
 */

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/** A stand-in OTLP/HTTP collector: keeps the JSON bodies POSTed to /v1/traces. */
const collector = async () => {
  const bodies: Array<string> = []
  const server: Server = createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      if (request.method === "POST" && request.url === "/v1/traces") bodies.push(body)
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  cleanups.push(() => new Promise((resolve) => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies }
}

interface OtlpSpan {
  readonly name: string
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
}

const spansOf = (bodies: ReadonlyArray<string>) =>
  bodies.flatMap((body) =>
    (JSON.parse(body).resourceSpans as Array<any>).flatMap((resource) => ({
      service: resource.resource.attributes.find((a: any) => a.key === "service.name")?.value.stringValue,
      spans: (resource.scopeSpans as Array<any>).flatMap((scope) => scope.spans as Array<OtlpSpan>)
    }))
  )

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value
  return value === undefined ? undefined : Object.values(value)[0]
}

describe("a server process's traces, metrics and logs", () => {
  it("exports its request spans over OTLP when configured, with the route and the request id", async () => {
    const sink = await collector()
    const dataDir = ServerProcess.tempDataDir()
    cleanups.push(() => ServerProcess.removeDir(dataDir))
    const server = await ServerProcess.start({
      dataDir,
      env: {
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
        OTEL_BSP_SCHEDULE_DELAY: "100"
      }
    })
    cleanups.push(() => server.stop())
    const account = await makeAccount(server)
    const me = await call(server, "GET", "/api/me", { auth: account.ownerKey })
    expect(me.status).toBe(200)
    const requestId = me.headers.get("x-request-id")!
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200)
    expect(await server.stop()).toBe(0)

    const exported = spansOf(sink.bodies)
    expect(exported.length).toBeGreaterThan(0)
    expect(new Set(exported.map((batch) => batch.service))).toEqual(new Set(["leadline"]))
    const spans = exported.flatMap((batch) => batch.spans)
    const request = spans.find((span) => attribute(span, "http.request_id") === requestId)
    expect(request, "the span of GET /api/me").toBeDefined()
    expect(attribute(request!, "http.route")).toBe("/api/me")
    expect(Number(attribute(request!, "http.response.status_code"))).toBe(200)
    expect(spans.some((span) => span.name === "Identity.me" || span.name.startsWith("Authenticator"))).toBe(true)
    // SQL statements are spans too, with their text (never their parameters).
    expect(spans.some((span) => String(attribute(span, "db.query.text") ?? "").includes("api_keys"))).toBe(true)
    // Health probes are left out; no key or token reaches the collector.
    expect(spans.some((span) => attribute(span, "url.path") === "/healthz")).toBe(false)
    const everything = sink.bodies.join("\n")
    expect(everything).not.toContain(account.ownerKey)
    expect(everything).not.toContain(server.adminToken)
  })

  it("sends nothing without OTEL_TRACES_EXPORTER, serves /metrics to its token and logs JSON lines", async () => {
    const sink = await collector()
    const dataDir = ServerProcess.tempDataDir()
    cleanups.push(() => ServerProcess.removeDir(dataDir))
    const server = await ServerProcess.start({
      dataDir,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, LEADLINE_METRICS_TOKEN: "scrape-me", LOG_FORMAT: "json" }
    })
    cleanups.push(() => server.stop())
    const account = await makeAccount(server)
    expect((await call(server, "GET", "/api/me", { auth: account.ownerKey })).status).toBe(200)
    const scrape = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: "Bearer scrape-me" } })
    expect(scrape.status).toBe(200)
    const text = await scrape.text()
    expect(PrometheusText.check(text)).toEqual([])
    const exposition = PrometheusText.parse(text)
    expect(PrometheusText.value(exposition, "leadline_http_requests_total", { route: "/api/me", status: "200" })).toBe(
      1
    )
    expect(PrometheusText.value(exposition, "leadline_build_info", { version: "0.1.0" })).toBe(1)
    expect(await server.stop()).toBe(0)
    expect(sink.bodies).toEqual([])

    const lines = server
      .log()
      .split("\n")
      .filter((line) => line.startsWith("{"))
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      const entry = JSON.parse(line)
      expect(typeof entry.time).toBe("string")
      expect(typeof entry.level).toBe("string")
    }
    expect(server.log()).not.toContain("scrape-me")
  })

  it("writes LOG_FORMAT=json lines, and a failed request's line carries the id its answer carried", async () => {
    const dataDir = ServerProcess.tempDataDir()
    cleanups.push(() => ServerProcess.removeDir(dataDir))
    // A first start migrates; a fault goes in while no server holds the database.
    const first = await ServerProcess.start({ dataDir })
    expect(await first.stop()).toBe(0)
    const query = Setups.queryEmbedded(dataDir)
    await query(
      "CREATE FUNCTION leadline_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$"
    )
    await query(
      "CREATE TRIGGER fault BEFORE INSERT ON leads FOR EACH ROW WHEN (NEW.name = 'fail-me') EXECUTE FUNCTION leadline_fault()"
    )
    const server = await ServerProcess.start({ dataDir, env: { LOG_FORMAT: "json" } })
    cleanups.push(() => server.stop())
    const account = await makeAccount(server)
    const failed = await call(server, "POST", "/api/v1/leads", {
      auth: account.ownerKey,
      json: { name: "fail-me", phone: "+5511977776666" }
    })
    expect(failed.status).toBe(500)
    const requestId = failed.headers.get("x-request-id")!
    expect(await server.stop()).toBe(0)

    const lines = server
      .log()
      .split("\n")
      .filter((line) => line.trim() !== "")
    // Every line of the process is one JSON object.
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    const mine = entries.filter((entry) => entry.request_id === requestId)
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({ level: "ERROR", message: "request failed" })
    expect(String(mine[0]!.cause)).toContain("injected fault")
    expect(server.log()).not.toContain(account.ownerKey)
  })
})

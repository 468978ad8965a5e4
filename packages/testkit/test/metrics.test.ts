import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { makeConversation } from "../src/conversations/ConversationsResource.ts"
import { makeKey } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { until } from "../src/internal/wire.ts"
import * as PrometheusText from "../src/observability/PrometheusText.ts"
import * as TestServer from "../src/TestServer.ts"
import * as Wirings from "../src/Wirings.ts"

const TOKEN = "metrics-token-for-tests"

/**
 * `/metrics` (issue 15, docs/observability.md §B2): the token rules, a valid exposition, and
 * counters that move by exactly the requests the test made, on both wirings. Each test server
 * keeps its own registry, as a process would.
 */
for (const [name, wiring] of Wirings.wirings) {
  describe(`metrics ${name}`, () => {
    const stage = Wirings.stage(wiring, { metricsToken: TOKEN, rateLimit: { limit: 50, window: "60 seconds" } })
    const owner = () => stage.account.ownerKey

    const scrape = async () => {
      const reply = await fetch(`${stage.server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(reply.status).toBe(200)
      expect(reply.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
      const text = await reply.text()
      expect(PrometheusText.check(text)).toEqual([])
      return PrometheusText.parse(text)
    }
    const delta =
      (before: PrometheusText.Exposition, after: PrometheusText.Exposition) =>
      (metric: string, labels: Record<string, string> = {}) =>
        PrometheusText.sum(after, metric, labels) - PrometheusText.sum(before, metric, labels)

    it("answers 401 without the token or with a wrong one, and never counts itself", async () => {
      for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: TOKEN }]) {
        const reply = await fetch(`${stage.server.baseUrl}/metrics`, { headers })
        expect(reply.status).toBe(401)
        expect(await reply.json()).toEqual({ error: "Invalid or missing metrics token", code: "unauthorized" })
      }
      const first = await scrape()
      const second = await scrape()
      expect(PrometheusText.sum(second, "leadline_http_requests_total", { route: "/metrics" })).toBe(0)
      expect(delta(first, second)("leadline_http_requests_total")).toBe(0)
    })

    it("counts requests by route pattern, method and status, exactly", async () => {
      const before = await scrape()
      for (let i = 0; i < 3; i++)
        expect((await call(stage.server, "GET", "/api/me", { auth: owner() })).status).toBe(200)
      for (let i = 0; i < 2; i++)
        expect((await call(stage.server, "GET", "/api/me", { auth: "lk_nope" })).status).toBe(401)
      expect((await call(stage.server, "GET", "/api/v1/nowhere", { auth: owner() })).status).toBe(404)
      const lead = await call(stage.server, "POST", "/api/v1/leads", {
        auth: owner(),
        json: { name: "Ada", phone: "+5511988887777" },
        headers: { "idempotency-key": "metrics-1" }
      })
      expect(lead.status, lead.text).toBe(201)
      const replay = await call(stage.server, "POST", "/api/v1/leads", {
        auth: owner(),
        json: { name: "Ada", phone: "+5511988887777" },
        headers: { "idempotency-key": "metrics-1" }
      })
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      const reused = await call(stage.server, "POST", "/api/v1/leads", {
        auth: owner(),
        json: { name: "Bea", phone: "+5511988887778" },
        headers: { "idempotency-key": "metrics-1" }
      })
      expect(reused.status).toBe(422)
      expect((await call(stage.server, "GET", `/api/v1/leads/${lead.body.id}`, { auth: owner() })).status).toBe(200)
      const after = await scrape()
      const moved = delta(before, after)
      const requests = (route: string, method: string, status: string) =>
        moved("leadline_http_requests_total", { route, method, status })
      expect(requests("/api/me", "GET", "200")).toBe(3)
      expect(requests("/api/me", "GET", "401")).toBe(2)
      expect(requests("unmatched", "GET", "404")).toBe(1)
      expect(requests("/api/v1/leads", "POST", "201")).toBe(2)
      expect(requests("/api/v1/leads", "POST", "422")).toBe(1)
      expect(requests("/api/v1/leads/:id", "GET", "200")).toBe(1)
      expect(moved("leadline_http_requests_total")).toBe(10)
      expect(moved("leadline_http_request_duration_seconds_count", { route: "/api/me", status: "200" })).toBe(3)
      expect(moved("leadline_idempotency_requests_total", { result: "new" })).toBe(1)
      expect(moved("leadline_idempotency_requests_total", { result: "replayed" })).toBe(1)
      expect(moved("leadline_idempotency_requests_total", { result: "key_reused" })).toBe(1)
      // The scrape itself is the one request in flight.
      expect(PrometheusText.value(after, "leadline_http_requests_in_flight")).toBe(1)

      // Labels are patterns and enumerations: never an id, a key or a URL.
      for (const family of after.families)
        for (const sample of family.samples)
          for (const value of Object.values(sample.labels)) {
            expect(value).not.toMatch(/lk_|ld_|[0-9a-f]{8}-[0-9a-f]{4}-/)
          }
      const routes = new Set(
        after.families
          .find((family) => family.name === "leadline_http_requests_total")!
          .samples.map((sample) => sample.labels.route!)
      )
      const openapi = await call(stage.server, "GET", "/api/openapi.json")
      const paths = new Set(Object.keys(openapi.body.paths).map((path) => path.replace(/\{(\w+)\}/g, ":$1")))
      for (const route of routes)
        expect(paths.has(route) || route === "unmatched" || route.startsWith("/api/openapi"), route).toBe(true)
    })

    if (name === "on SQL")
      it("counts units of work: a create with a new key in one statement, a replay and a taken phone rerun once each", async () => {
        const before = await scrape()
        const create = (key: string, phone: string) =>
          call(stage.server, "POST", "/api/v1/leads", {
            auth: owner(),
            json: { name: "Unit", phone },
            headers: { "idempotency-key": key }
          })
        expect((await create("units-1", "+5511988880001")).status).toBe(201)
        const replay = await create("units-1", "+5511988880001")
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect((await create("units-2", "+5511988880001")).status).toBe(409)
        const moved = delta(before, await scrape())
        // Background loops run units of their own meanwhile: the counts are at least these.
        expect(moved("leadline_db_units_total", { committed: "one_statement" })).toBeGreaterThanOrEqual(1)
        expect(moved("leadline_db_unit_reruns_total")).toBe(2)
        expect(moved("leadline_db_transaction_duration_seconds_count")).toBeGreaterThanOrEqual(3)
        expect(PrometheusText.value(await scrape(), "leadline_db_transactions_in_flight")).toBeGreaterThanOrEqual(0)
      })

    if (name === "on SQL")
      it("counts a WAL flush round for an order that took stock and for its replay, none for an untracked product's", async () => {
        const product = async (sku: string, stock: number | null) => {
          const made = await call(stage.server, "POST", "/api/v1/catalogue/products", {
            auth: owner(),
            json: { sku, name: sku, unit_amount: 500, currency: "USD", stock }
          })
          expect(made.status, made.text).toBe(201)
          return made.body.id as string
        }
        const lead = await call(stage.server, "POST", "/api/v1/leads", {
          auth: owner(),
          json: { name: "Buyer", phone: "+5511988880077" }
        })
        expect(lead.status, lead.text).toBe(201)
        // Enough for every one of the 16 stripes (SqlCatalogue.STRIPES) to hold units: with 10, a connection's
        // stripe may be empty, and the order then asks in a transaction, which waits for its own flush.
        const tracked = await product("FLUSH-TRACKED", 1_000)
        const untracked = await product("FLUSH-UNTRACKED", null)
        const order = (productId: string, key: string) =>
          call(stage.server, "POST", "/api/v1/orders", {
            auth: owner(),
            json: { lead_id: lead.body.id, items: [{ product_id: productId, quantity: 1 }] },
            headers: { "idempotency-key": key }
          })
        const rounds = async (request: () => Promise<{ status: number; text: string }>, status = 201) => {
          const before = await scrape()
          const reply = await request()
          expect(reply.status, reply.text).toBe(status)
          return delta(before, await scrape())("leadline_db_wal_flush_rounds_total")
        }
        expect(await rounds(() => order(untracked, "flush-untracked"))).toBe(0)
        expect(await rounds(() => order(tracked, "flush-tracked"))).toBe(1)
        expect(await rounds(() => order(tracked, "flush-tracked"))).toBe(1)
      })

    it("counts a 429, a webhook delivered, a message received, and the queues at scrape time", async () => {
      const before = await scrape()
      const endpoint = stage.receiver.endpoint(`/metrics-${name.replace(" ", "-")}`)
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: owner(),
        json: { url: endpoint.url, events: ["message.received"] }
      })
      expect(registered.status, registered.text).toBe(201)
      endpoint.setSecret(registered.body.secret)
      await makeConversation(stage.server, owner())
      await endpoint.waitFor(1)
      const settled = await until(
        scrape,
        // A scrape during the attempt counts it due, and a scrape whose queue read misses its
        // one second (a loaded machine) keeps the last value: wait for a fresh zero too.
        (scraped) =>
          delta(before, scraped)("leadline_webhook_deliveries_finished_total", { result: "delivered" }) >= 1 &&
          PrometheusText.value(scraped, "leadline_outbox_due") === 0
      )
      const moved = delta(before, settled)
      expect(moved("leadline_webhook_attempts_total", { outcome: "success" })).toBe(1)
      expect(moved("leadline_webhook_attempts_total")).toBe(1)
      expect(moved("leadline_webhook_deliveries_finished_total", { result: "delivered" })).toBe(1)
      expect(moved("leadline_webhook_delivery_lag_seconds_count")).toBe(1)
      expect(moved("leadline_messages_total", { direction: "inbound", status: "received" })).toBe(1)
      expect(PrometheusText.value(settled, "leadline_outbox_due")).toBe(0)
      expect(PrometheusText.value(settled, "leadline_db_up")).toBe(1)
      expect(PrometheusText.value(settled, "leadline_build_info", { version: "test" })).toBe(1)
      expect(PrometheusText.value(settled, "process_resident_memory_bytes")).toBeGreaterThan(0)

      // Past the key's limit of 50 a minute.
      const limited = await makeKeyed()
      let refused = 0
      for (let i = 0; i < 51; i++)
        if ((await call(stage.server, "GET", "/api/me", { auth: limited })).status === 429) refused++
      expect(refused).toBe(1)
      const after = await scrape()
      expect(delta(settled, after)("leadline_rate_limited_total")).toBe(1)
      expect(delta(settled, after)("leadline_http_requests_total", { route: "/api/me", status: "429" })).toBe(1)

      // The Grafana dashboard in examples/ plots only series the server exports.
      const dashboard = readFileSync(
        new URL("../../../examples/grafana/leadline-dashboard.json", import.meta.url),
        "utf8"
      )
      const exported = new Set(after.families.map((family) => family.name))
      const plotted = new Set(dashboard.match(/\b(?:leadline|process|nodejs)_[a-z_]+/g))
      const base = (metric: string) => metric.replace(/_(bucket|sum|count)$/, "")
      expect([...plotted].filter((metric) => !exported.has(metric) && !exported.has(base(metric)))).toEqual([])
    })

    /** A fresh key of the account, so the limit counts only this test's requests. */
    const makeKeyed = async () => (await makeKey(stage.server, stage.account.accountId, { name: "limited" })).apiKey
  })
}

describe("metrics without a token", () => {
  it("has no /metrics route: 404 as any unknown path", async () => {
    const server = await TestServer.start()
    try {
      const reply = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(reply.status).toBe(404)
      expect(await reply.json()).toEqual({ error: "No such route", code: "not_found" })
    } finally {
      await server.close()
    }
  })
})

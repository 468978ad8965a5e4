import { writeFileSync } from "node:fs"
import { cpus, totalmem } from "node:os"
import { join } from "node:path"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"
import * as Receiver from "./Receiver.ts"

/**
 * `npm run bench`: Leadline against the hand-written baseline on the same
 * database, then the webhook pipeline, then list and create latency at scale.
 * Settings: BENCH_SECONDS (per measured run, 5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10).
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const WARMUP_SECONDS = 2
const here = join(import.meta.dirname, "..")

const post = async (url: string, path: string, auth: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${auth}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as any }
}

// Valid, distinct US numbers for every create of the run.
let phoneCounter = 2_000_000
const nextPhone = () => `+1415${phoneCounter++}`
let keyCounter = 0

/** Seeds `count` leads into an account straight in SQL, keeping `lead_counts` in step. */
const seedLeads = (databaseUrl: string, accountId: string, count: number) =>
  Postgres.query(
    databaseUrl,
    `WITH inserted AS (
       INSERT INTO leads (account_id, id, name, phone, email, tags, status, assigned_user_id, attributes, created_at, updated_at)
       SELECT $1::uuid, 'ld_seed' || lpad(i::text, 19, '0'), 'Seed ' || i, '+1' || (2000000000 + i)::text, NULL,
              '["seed"]'::jsonb, 'new', NULL, '{"source":"seed"}'::jsonb,
              timestamptz '2026-01-01' + i * interval '1 millisecond', timestamptz '2026-01-01' + i * interval '1 millisecond'
       FROM generate_series(1, $2::int) AS i RETURNING 1)
     INSERT INTO lead_counts (account_id, total) SELECT $1::uuid, count(*) FROM inserted
     ON CONFLICT (account_id) DO UPDATE SET total = lead_counts.total + EXCLUDED.total`,
    [accountId, count]
  )

interface RouteResult {
  readonly route: string
  readonly leadline: Array<Load.LoadResult>
  readonly baseline: Array<Load.LoadResult>
}

const routeLoad = (server: string, route: string, apiKey: string): Load.LoadOptions => {
  const auth = { authorization: `Bearer ${apiKey}` }
  switch (route) {
    case "GET /api/me":
      return { url: server, path: "/api/me", headers: auth, connections: CONNECTIONS, seconds: SECONDS }
    case "GET /api/v1/leads?limit=50":
      return { url: server, path: "/api/v1/leads?limit=50", headers: auth, connections: CONNECTIONS, seconds: SECONDS }
    default:
      return {
        url: server,
        path: "/api/v1/leads",
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        next: () => ({
          body: JSON.stringify({ name: "Bench lead", phone: nextPhone() }),
          headers: { "idempotency-key": `bench-${process.pid}-${keyCounter++}` }
        }),
        connections: CONNECTIONS,
        seconds: SECONDS
      }
  }
}

const summarize = (results: ReadonlyArray<Load.LoadResult>) => ({
  requestsPerSecond: Load.median(results.map((r) => r.requestsPerSecond)),
  p50: Load.median(results.map((r) => r.p50)),
  p99: Load.median(results.map((r) => r.p99)),
  non2xx: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0)
})

const main = async () => {
  Processes.pinSelf()
  const database = await Postgres.freshDatabase()
  const report: Record<string, unknown> = {}
  try {
    // Leadline migrates the database on start; the baseline then runs on the same schema and data.
    let leadline = await Processes.leadline(database.url, { WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
    const account = await post(leadline.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Bench" })
    const apiKey: string = account.body.api_key
    await seedLeads(database.url, account.body.account_id, 1000)
    const baseline = await Processes.baseline(database.url)

    // HTTP routes, alternating the two servers round by round.
    const routes: Array<RouteResult> = []
    for (const route of ["GET /api/me", "GET /api/v1/leads?limit=50", "POST /api/v1/leads"]) {
      const result: RouteResult = { route, leadline: [], baseline: [] }
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? (["leadline", "baseline"] as const) : (["baseline", "leadline"] as const)
        for (const which of order) {
          const url = which === "leadline" ? leadline.url : baseline.url
          await Load.run({ ...routeLoad(url, route, apiKey), seconds: WARMUP_SECONDS })
          result[which].push(await Load.run(routeLoad(url, route, apiKey)))
        }
      }
      routes.push(result)
      console.log(route, JSON.stringify({ leadline: summarize(result.leadline), baseline: summarize(result.baseline) }))
    }
    report.routes = routes.map((r) => {
      const ratios = r.leadline.map((l, i) => l.requestsPerSecond / r.baseline[i]!.requestsPerSecond)
      return {
        route: r.route,
        leadline: summarize(r.leadline),
        baseline: summarize(r.baseline),
        medianRatio: Load.median(ratios),
        p99Ratio: summarize(r.leadline).p99 / summarize(r.baseline).p99,
        rounds: { leadline: r.leadline, baseline: r.baseline }
      }
    })
    await baseline.stop()

    // Webhook pipeline: creates at a steady pace while M endpoints subscribe; the worker runs in the server.
    const receiver = await Receiver.start()
    const ENDPOINTS = 5
    const LEADS = 400
    for (let i = 0; i < ENDPOINTS; i++) {
      await post(leadline.url, "/api/webhooks/endpoints", apiKey, {
        url: `${receiver.url}/e${i}`,
        events: ["lead.created"]
      })
    }
    await leadline.stop()
    leadline = await Processes.leadline(database.url, { WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
    for (let i = 0; i < LEADS; i++) {
      await post(leadline.url, "/api/v1/leads", apiKey, { name: "Hooked", phone: nextPhone() })
    }
    await receiver.waitFor(LEADS * ENDPOINTS, 120_000)
    const latencies = receiver.arrivals().map((a) => a.receivedAt - a.createdAt)
    report.webhookLatency = {
      endpoints: ENDPOINTS,
      leads: LEADS,
      deliveries: latencies.length,
      p50: Load.percentile(latencies, 50),
      p99: Load.percentile(latencies, 99)
    }
    console.log("webhook latency", JSON.stringify(report.webhookLatency))

    // Throughput of one worker on a backlog: the server records, a separate worker drains.
    await leadline.stop()
    leadline = await Processes.leadline(database.url, {
      WEBHOOK_WORKER_ENABLED: "false",
      WEBHOOK_ALLOW_PRIVATE_URLS: "true"
    })
    const backlog = await Receiver.start()
    const account2 = await post(leadline.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Backlog" })
    await post(leadline.url, "/api/webhooks/endpoints", account2.body.api_key, {
      url: `${backlog.url}/drain`,
      events: ["lead.created"]
    })
    const BACKLOG = 3000
    for (let i = 0; i < BACKLOG; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, () =>
          post(leadline.url, "/api/v1/leads", account2.body.api_key, { name: "Backlog", phone: nextPhone() })
        )
      )
    }
    const worker = await Processes.worker(database.url, { WEBHOOK_ALLOW_PRIVATE_URLS: "true" })
    await backlog.waitFor(BACKLOG, 180_000)
    await worker.stop()
    // Steady state: the first deliveries of a fresh worker process run before the JIT has
    // warmed up (they measured 15-20% slower), so the rate is taken from the 500th on.
    const WARMUP = 500
    const times = backlog
      .arrivals()
      .map((a) => a.receivedAt)
      .sort((a, b) => a - b)
    const seconds = (times.at(-1)! - times[WARMUP - 1]!) / 1000
    const overall = (times.at(-1)! - times[0]!) / 1000
    report.workerThroughput = {
      deliveries: BACKLOG,
      warmup: WARMUP,
      seconds,
      perSecond: (BACKLOG - WARMUP) / seconds,
      overallPerSecond: BACKLOG / overall
    }
    console.log("worker throughput", JSON.stringify(report.workerThroughput))
    await backlog.close()
    await receiver.close()

    // Scale: the first page and a create in an account of 1,000 leads and one of 1,000,000.
    const big = await post(leadline.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Big" })
    const small = await post(leadline.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Small" })
    await seedLeads(database.url, small.body.account_id, 1_000)
    await seedLeads(database.url, big.body.account_id, 1_000_000)
    await Postgres.query(database.url, "ANALYZE leads")
    const scale: Record<string, unknown> = {}
    for (const [name, key] of [
      ["1k", small.body.api_key],
      ["1m", big.body.api_key]
    ] as const) {
      await Load.run({ ...routeLoad(leadline.url, "GET /api/v1/leads?limit=50", key), seconds: WARMUP_SECONDS })
      const list = await Load.run(routeLoad(leadline.url, "GET /api/v1/leads?limit=50", key))
      const create = await Load.run(routeLoad(leadline.url, "POST /api/v1/leads", key))
      scale[name] = { list, create }
    }
    const s = scale as Record<"1k" | "1m", { list: Load.LoadResult; create: Load.LoadResult }>
    report.scale = {
      ...scale,
      listP50Ratio: s["1m"].list.p50 / s["1k"].list.p50,
      createP50Ratio: s["1m"].create.p50 / s["1k"].create.p50
    }
    console.log("scale", JSON.stringify(report.scale))
    await leadline.stop()

    report.machine = {
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      postgres: await Postgres.version(database.url),
      pinning: Processes.pinning
    }
    report.settings = { seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, rounds: ROUNDS, connections: CONNECTIONS }
    report.date = new Date().toISOString()
    writeFileSync(join(here, "results.json"), `${JSON.stringify(report, null, 2)}\n`)
    writeFileSync(join(here, "RESULTS.md"), (await import("./Report.ts")).render(report))
    console.log("wrote bench/results.json and bench/RESULTS.md")
  } finally {
    await database.drop()
  }
}

await main()

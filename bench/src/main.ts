import { mkdtempSync, writeFileSync } from "node:fs"
import { cpus, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import * as BaselineSeed from "../baseline/Seed.ts"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"
import * as Receiver from "./Receiver.ts"

/**
 * `npm run bench`: Leadline against the hand-written baseline (bench/baseline), each on a
 * fresh database of its own, route by route at every connection count; then Leadline's
 * webhook pipeline; then list and create latency in a small and a big account, both servers.
 * Settings: BENCH_SECONDS (per measured run, 5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (a list,
 * "10,50"), BENCH_WARMUP_SECONDS (2), BENCH_ROUTES (a list of me, list, create; all unless set),
 * BENCH_SCALE ("0" skips the scale section),
 * BENCH_SCALE_LEADS (the big account's leads, 1000000), BENCH_BEFORE (the path of another checkout of
 * Leadline, installed, loaded on the routes as a third server "before": before/after ratios from one run;
 * BENCH_BEFORE_LABEL names it in the report, e.g. the commit); BENCH_EMBEDDED=0 leaves out the embedded server
 * (Leadline on PGlite, loaded on the routes beside the others by default).
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? "10,50").split(",").map((part) => {
  const n = Number(part.trim())
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_CONNECTIONS: "${part}" is not a connection count`)
  return n
})
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const BEFORE =
  process.env.BENCH_BEFORE === undefined || process.env.BENCH_BEFORE === "" ? undefined : process.env.BENCH_BEFORE
const SCALE = process.env.BENCH_SCALE !== "0"
/** BENCH_EMBEDDED=0 leaves out the embedded server (Leadline on PGlite), loaded on the routes by default. */
const EMBEDDED = process.env.BENCH_EMBEDDED !== "0"
const SMALL_LEADS = 1_000
const BIG_LEADS = Number(process.env.BENCH_SCALE_LEADS ?? 1_000_000)
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

/**
 * Seeds `count` leads into a Leadline account straight in Leadline's tables, keeping its lead
 * counter in step: the count is added to one `lead_counts` row of the account (Leadline sums
 * them on read), else a row is inserted. No ON CONFLICT, so it does not depend on that table's key.
 * In batches of 100,000, created 2.5 s apart (a million over 29 days): the leads' analytics
 * trigger adds each lead to its 15-minute tally, and a million updates of a few tally rows in one
 * transaction would each walk the versions the ones before left (it ran for over 15 minutes).
 */
const seedLeadlineLeads = async (databaseUrl: string, accountId: string, count: number) => {
  const batch = 100_000
  for (let from = 1; from <= count; from += batch) {
    await Postgres.query(
      databaseUrl,
      `WITH inserted AS (
         INSERT INTO leads (account_id, id, name, phone, email, tags, status, assigned_user_id, attributes, created_at, updated_at)
         SELECT $1::uuid, 'ld_seed' || lpad(i::text, 19, '0'), 'Seed ' || i, '+1' || (2000000000 + i)::text, NULL,
                '["seed"]'::jsonb, 'new', NULL, '{"source":"seed"}'::jsonb,
                timestamptz '2026-01-01' + i * interval '2.5 seconds', timestamptz '2026-01-01' + i * interval '2.5 seconds'
         FROM generate_series($2::int, $3::int) AS i RETURNING 1),
       counted AS (
         UPDATE lead_counts SET total = total + (SELECT count(*) FROM inserted)
         WHERE ctid = (SELECT ctid FROM lead_counts WHERE account_id = $1::uuid LIMIT 1) RETURNING 1)
       INSERT INTO lead_counts (account_id, total)
       SELECT $1::uuid, (SELECT count(*) FROM inserted) WHERE NOT EXISTS (SELECT 1 FROM counted)`,
      [accountId, from, Math.min(count, from + batch - 1)]
    )
  }
  // As the baseline's seed does: statistics and the visibility map, as autovacuum would have made them.
  await Postgres.query(databaseUrl, "VACUUM (ANALYZE) leads")
}

/** A seeded account must list what was seeded (a seed out of step with a server's schema fails here). */
const expectTotal = async (server: string, url: string, apiKey: string, expected: number) => {
  const response = await fetch(`${url}/api/v1/leads?limit=1`, { headers: { authorization: `Bearer ${apiKey}` } })
  const body = (await response.json()) as any
  if (response.status !== 200 || body.meta?.total !== expected) {
    throw new Error(
      `${server}: a seeded account lists ${JSON.stringify(body.meta)} (${response.status}), not ${expected}`
    )
  }
}

const ME = "GET /api/me"
const LIST = "GET /api/v1/leads?limit=50"
/** Every connection creates leads in the same account with the same key. */
const CREATE = "POST /api/v1/leads (one account)"
const ALL_ROUTES = [ME, LIST, CREATE] as const
type Route = (typeof ALL_ROUTES)[number]
/** BENCH_ROUTES: a comma list of `me`, `list`, `create` to load only those (all by default). */
const ROUTE_NAMES: Record<string, Route> = { me: ME, list: LIST, create: CREATE }
const ROUTES: ReadonlyArray<Route> =
  process.env.BENCH_ROUTES === undefined || process.env.BENCH_ROUTES === ""
    ? ALL_ROUTES
    : process.env.BENCH_ROUTES.split(",").map((name) => {
        const route = ROUTE_NAMES[name.trim()]
        if (route === undefined) throw new Error(`BENCH_ROUTES: "${name}" is not one of me, list, create`)
        return route
      })

const routeLoad = (server: string, route: Route, apiKey: string, connections: number): Load.LoadOptions => {
  const auth = { authorization: `Bearer ${apiKey}` }
  switch (route) {
    case ME:
      return { url: server, path: "/api/me", headers: auth, connections, seconds: SECONDS }
    case LIST:
      return { url: server, path: "/api/v1/leads?limit=50", headers: auth, connections, seconds: SECONDS }
    case CREATE:
      return {
        url: server,
        path: "/api/v1/leads",
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        next: () => ({
          body: JSON.stringify({ name: "Bench lead", phone: nextPhone() }),
          headers: { "idempotency-key": `bench-${process.pid}-${keyCounter++}` }
        }),
        connections,
        seconds: SECONDS
      }
  }
}

interface RouteResult {
  readonly route: Route
  readonly connections: number
  readonly leadline: Array<Load.LoadResult>
  readonly baseline: Array<Load.LoadResult>
  readonly before: Array<Load.LoadResult>
  readonly embedded: Array<Load.LoadResult>
}

const summarize = (results: ReadonlyArray<Load.LoadResult>) => ({
  requestsPerSecond: Load.median(results.map((r) => r.requestsPerSecond)),
  p50: Load.median(results.map((r) => r.p50)),
  p99: Load.median(results.map((r) => r.p99)),
  p999: Load.median(results.map((r) => r.p999)),
  non2xx: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0)
})

interface Scaled {
  readonly list: Load.LoadResult
  readonly create: Load.LoadResult
}

/** First page and creates in a small and a big account of one server. */
const measureScale = async (url: string, keys: { readonly small: string; readonly big: string }) => {
  const connections = CONNECTIONS[0]!
  const result: Record<"small" | "big", Scaled> = {} as any
  for (const size of ["small", "big"] as const) {
    await Load.run({ ...routeLoad(url, LIST, keys[size], connections), seconds: WARMUP_SECONDS })
    const list = await Load.run(routeLoad(url, LIST, keys[size], connections))
    const create = await Load.run(routeLoad(url, CREATE, keys[size], connections))
    result[size] = { list, create }
  }
  return {
    ...result,
    listP50Ratio: result.big.list.p50 / result.small.list.p50,
    createP50Ratio: result.big.create.p50 / result.small.create.p50
  }
}

const log = (message: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`)

/** How long a server rests after the load before its resident set is read again. */
/**
 * The servers share one core: a heap trim in one (HeapTrim.ts, after quiet following work) would stall
 * the one being measured. So they trim after this much quiet, longer than any gap between their loads
 * (3 or 4 servers take turns of warm-up plus run), and idle and rested are read after it.
 */
const TRIM_QUIET_SECONDS = 30
const TRIM = { LEADLINE_HEAP_TRIM_SECONDS: String(TRIM_QUIET_SECONDS) }
const REST_SECONDS = Number(process.env.BENCH_REST_SECONDS ?? TRIM_QUIET_SECONDS + 5)

const main = async () => {
  Processes.pinSelf()
  // Each server on a fresh database of its own: Leadline migrates its database on start, the
  // baseline applies its own schema (bench/baseline/Schema.ts) on start.
  const leadlineDb = await Postgres.freshDatabase("leadline")
  const baselineDb = await Postgres.freshDatabase("baseline")
  const databases = [leadlineDb, baselineDb]
  const report: Record<string, unknown> = {}
  // Every process started, so that a failed run leaves none behind.
  const running: Array<Processes.Running> = []
  const started = async (starting: Promise<Processes.Running>) => {
    const child = await starting
    running.push(child)
    return child
  }
  try {
    let leadline = await started(Processes.leadline(leadlineDb.url, { WEBHOOK_ALLOW_PRIVATE_URLS: "true", ...TRIM }))
    const account = await post(leadline.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Bench" })
    await seedLeadlineLeads(leadlineDb.url, account.body.account_id, SMALL_LEADS)
    let baseline = await started(Processes.baseline(baselineDb.url))
    const baselineAccount = await BaselineSeed.createAccount(baselineDb.url, "Bench")
    await BaselineSeed.seedLeads(baselineDb.url, baselineAccount.accountId, SMALL_LEADS)
    const servers: Record<"leadline" | "baseline" | "before" | "embedded", { url: string; key: string } | undefined> = {
      leadline: { url: leadline.url, key: account.body.api_key as string },
      baseline: { url: baseline.url, key: baselineAccount.apiKey },
      before: undefined,
      embedded: undefined
    }
    let before: Processes.Running | undefined
    if (BEFORE !== undefined) {
      const beforeDb = await Postgres.freshDatabase("before")
      databases.push(beforeDb)
      before = await started(Processes.leadline(beforeDb.url, TRIM, BEFORE))
      const beforeAccount = await post(before.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Bench" })
      await seedLeadlineLeads(beforeDb.url, beforeAccount.body.account_id, SMALL_LEADS)
      servers.before = { url: before.url, key: beforeAccount.body.api_key }
      await expectTotal("before", before.url, servers.before.key, SMALL_LEADS)
      log(`before: Leadline from ${BEFORE} on ${beforeDb.name}`)
    }
    // The embedded default (PGlite in the server's process), what `npm start` gives a new user: the same
    // server and account, its leads created through the API (its database cannot be reached from outside).
    let embedded: Processes.Running | undefined
    if (EMBEDDED) {
      embedded = await started(
        Processes.leadlineEmbedded(mkdtempSync(join(tmpdir(), "leadline-bench-embedded-")), TRIM)
      )
      const embeddedAccount = await post(embedded.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Bench" })
      for (let i = 0; i < SMALL_LEADS; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, () =>
            post(embedded!.url, "/api/v1/leads", embeddedAccount.body.api_key, { name: "Seed", phone: nextPhone() })
          )
        )
      }
      servers.embedded = { url: embedded.url, key: embeddedAccount.body.api_key }
      await expectTotal("embedded", embedded.url, servers.embedded.key, SMALL_LEADS)
      log("embedded: Leadline on PGlite")
    }
    const loaded = (["leadline", "baseline", "before", "embedded"] as const).filter(
      (which) => servers[which] !== undefined
    )
    await expectTotal("Leadline", leadline.url, account.body.api_key, SMALL_LEADS)
    await expectTotal("baseline", baseline.url, baselineAccount.apiKey, SMALL_LEADS)
    log(`Leadline on ${leadlineDb.name}, baseline on ${baselineDb.name}, ${SMALL_LEADS} leads each`)

    // Resident sets at idle (started, seeded, not yet loaded), after the route loads, and after a rest.
    const measured = Object.entries({
      leadline,
      baseline,
      ...(before === undefined ? {} : { before }),
      ...(embedded === undefined ? {} : { embedded })
    })
    const residentSets = () => measured.map(([, server]) => Processes.residentMB(server.process.pid))
    // Idle is a server that has had no request for a while, and has trimmed its heap.
    await new Promise((resolve) => setTimeout(resolve, (TRIM_QUIET_SECONDS + Processes.IDLE_SECONDS) * 1000))
    const idle = residentSets()

    // HTTP routes at every connection count, alternating the two servers round by round.
    const routes: Array<RouteResult> = []
    for (const route of ROUTES) {
      for (const connections of CONNECTIONS) {
        const result: RouteResult = { route, connections, leadline: [], baseline: [], before: [], embedded: [] }
        for (let round = 0; round < ROUNDS; round++) {
          // Each round starts with the next server, so none is always first (or always after the others).
          const order = loaded.map((_, i) => loaded[(i + round) % loaded.length]!)
          for (const which of order) {
            const { url, key } = servers[which]!
            await Load.run({ ...routeLoad(url, route, key, connections), seconds: WARMUP_SECONDS })
            result[which].push(await Load.run(routeLoad(url, route, key, connections)))
          }
        }
        routes.push(result)
        log(
          `${route} at ${connections} connections ${JSON.stringify({ leadline: summarize(result.leadline), baseline: summarize(result.baseline) })}`
        )
      }
    }
    report.routes = routes.map((r) => {
      const ratios = r.leadline.map((l, i) => l.requestsPerSecond / r.baseline[i]!.requestsPerSecond)
      return {
        route: r.route,
        connections: r.connections,
        leadline: summarize(r.leadline),
        baseline: summarize(r.baseline),
        medianRatio: Load.median(ratios),
        p99Ratio: summarize(r.leadline).p99 / summarize(r.baseline).p99,
        ...(r.before.length === 0
          ? {}
          : {
              before: summarize(r.before),
              beforeRatio: Load.median(r.before.map((b, i) => b.requestsPerSecond / r.baseline[i]!.requestsPerSecond))
            }),
        ...(r.embedded.length === 0
          ? {}
          : {
              embedded: summarize(r.embedded),
              // The embedded server against the same server on PostgreSQL, round by round.
              embeddedRatio: Load.median(
                r.embedded.map((e, i) => e.requestsPerSecond / r.leadline[i]!.requestsPerSecond)
              )
            }),
        rounds: {
          leadline: r.leadline,
          baseline: r.baseline,
          ...(r.before.length === 0 ? {} : { before: r.before }),
          ...(r.embedded.length === 0 ? {} : { embedded: r.embedded })
        }
      }
    })
    const afterLoad = residentSets()
    await new Promise((resolve) => setTimeout(resolve, REST_SECONDS * 1000))
    const rested = residentSets()
    report.memory = Object.fromEntries(
      measured.map(([which], i) => [which, { idleMB: idle[i], loadedMB: afterLoad[i], restedMB: rested[i] }])
    )
    report.memoryRestSeconds = REST_SECONDS
    log(`resident sets ${JSON.stringify(report.memory)}`)
    await baseline.stop()
    await before?.stop()
    await embedded?.stop()
    const apiKey: string = account.body.api_key

    // Webhook pipeline (Leadline only): creates at a steady pace while M endpoints subscribe; the worker runs in the server.
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
    leadline = await started(Processes.leadline(leadlineDb.url, { WEBHOOK_ALLOW_PRIVATE_URLS: "true" }))
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
    log(`webhook latency ${JSON.stringify(report.webhookLatency)}`)

    // Throughput of one worker on a backlog: the server records, a separate worker drains.
    await leadline.stop()
    leadline = await started(
      Processes.leadline(leadlineDb.url, {
        WEBHOOK_WORKER_ENABLED: "false",
        WEBHOOK_ALLOW_PRIVATE_URLS: "true"
      })
    )
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
    const worker = await started(Processes.worker(leadlineDb.url, { WEBHOOK_ALLOW_PRIVATE_URLS: "true" }))
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
    log(`worker throughput ${JSON.stringify(report.workerThroughput)}`)
    await backlog.close()
    await receiver.close()

    // Scale: the first page and a create in an account of 1,000 leads and one of BIG_LEADS,
    // on each server (the baseline restarted on its own database).
    if (SCALE) {
      const big = await post(leadline.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Big" })
      const small = await post(leadline.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Small" })
      let seeded = Date.now()
      await seedLeadlineLeads(leadlineDb.url, small.body.account_id, SMALL_LEADS)
      await seedLeadlineLeads(leadlineDb.url, big.body.account_id, BIG_LEADS)
      log(`seeded Leadline's accounts in ${((Date.now() - seeded) / 1000).toFixed(0)} s`)
      await expectTotal("Leadline", leadline.url, small.body.api_key, SMALL_LEADS)
      await expectTotal("Leadline", leadline.url, big.body.api_key, BIG_LEADS)
      const leadlineScale = await measureScale(leadline.url, { small: small.body.api_key, big: big.body.api_key })
      log(`scale, Leadline ${JSON.stringify(leadlineScale)}`)

      baseline = await started(Processes.baseline(baselineDb.url))
      const baselineSmall = await BaselineSeed.createAccount(baselineDb.url, "Small")
      const baselineBig = await BaselineSeed.createAccount(baselineDb.url, "Big")
      seeded = Date.now()
      await BaselineSeed.seedLeads(baselineDb.url, baselineSmall.accountId, SMALL_LEADS)
      await BaselineSeed.seedLeads(baselineDb.url, baselineBig.accountId, BIG_LEADS)
      log(`seeded the baseline's accounts in ${((Date.now() - seeded) / 1000).toFixed(0)} s`)
      await expectTotal("baseline", baseline.url, baselineSmall.apiKey, SMALL_LEADS)
      await expectTotal("baseline", baseline.url, baselineBig.apiKey, BIG_LEADS)
      const baselineScale = await measureScale(baseline.url, { small: baselineSmall.apiKey, big: baselineBig.apiKey })
      log(`scale, baseline ${JSON.stringify(baselineScale)}`)
      await baseline.stop()
      report.scale = {
        leads: { small: SMALL_LEADS, big: BIG_LEADS },
        connections: CONNECTIONS[0],
        leadline: leadlineScale,
        baseline: baselineScale
      }
    }
    await leadline.stop()

    report.machine = {
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      postgres: await Postgres.version(leadlineDb.url),
      pinning: Processes.pinning
    }
    report.settings = {
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      scale: SCALE ? { small: SMALL_LEADS, big: BIG_LEADS } : false,
      ...(BEFORE === undefined ? {} : { before: process.env.BENCH_BEFORE_LABEL ?? BEFORE })
    }
    report.date = new Date().toISOString()
    writeFileSync(join(here, "results.json"), `${JSON.stringify(report, null, 2)}\n`)
    writeFileSync(join(here, "RESULTS.md"), (await import("./Report.ts")).render(report))
    log("wrote bench/results.json and bench/RESULTS.md")
  } finally {
    for (const child of running) {
      if (child.process.exitCode === null && child.process.signalCode === null) await child.stop()
    }
    for (const database of databases) await database.drop()
  }
}

await main()

import { readFileSync, writeFileSync } from "node:fs"
import { cpus, loadavg, totalmem } from "node:os"
import { join } from "node:path"
import * as Checkout from "./Checkout.ts"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"

/**
 * `npm run bench:scaling`: throughput of 1, 2 and 4 Leadline server processes on one PostgreSQL
 * database (docs/scaling.md, "Servers and workers on one PostgreSQL"). Four servers start on one
 * fresh database, with one account of 1,000 leads; each measured run loads the first 1, 2 or 4 of
 * them together on the route benchmark's routes (the first page of leads, and lead creates in that
 * account), the connections spread evenly across the loaded servers, their latencies merged. The
 * three counts alternate within each round (each round starts with the next), so a noisy machine
 * moves them alike; a server not loaded in a run only polls its queues (a few statements a second).
 * Settings: BENCH_SECONDS (per measured run, 5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (in all,
 * spread across the loaded servers, 50), BENCH_WARMUP_SECONDS (2), BENCH_PROCESSES ("1,2,4").
 * Writes bench/SCALING.md and the table of docs/scaling.md between its markers.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const COUNTS = (process.env.BENCH_PROCESSES ?? "1,2,4").split(",").map((part) => {
  const n = Number(part.trim())
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_PROCESSES: "${part}" is not a number of processes`)
  return n
})
if (!Number.isInteger(CONNECTIONS) || CONNECTIONS < Math.max(...COUNTS)) {
  throw new Error(`BENCH_CONNECTIONS: ${CONNECTIONS} cannot be spread over ${Math.max(...COUNTS)} servers`)
}
const LEADS = 1_000
const here = join(import.meta.dirname, "..")
const DOC = join(here, "..", "docs", "scaling.md")
const BEGIN = "<!-- scaling-table:begin -->"
const END = "<!-- scaling-table:end -->"

/** The servers share every core but the last, which the load generator has (core 0 and core 1 on two cores). */
const CORES = cpus().length
const SERVER_CORES = CORES > 2 ? `0-${CORES - 2}` : "0"
const LOAD_CORE = Math.max(CORES - 1, 0)

const log = (line: string) => console.log(`[bench:scaling ${new Date().toISOString().slice(11, 19)}] ${line}`)

const LIST = "GET /api/v1/leads?limit=50"
const CREATE = "POST /api/v1/leads (one account)"
const ROUTES = [LIST, CREATE] as const
type Route = (typeof ROUTES)[number]

// Valid, distinct US numbers for every create of the run, whichever server takes it.
let phoneCounter = 2_000_000
const nextPhone = () => `+1415${phoneCounter++}`
let keyCounter = 0
const nextKey = () => `bench-scaling-${process.pid}-${keyCounter++}`

const loadOf = (url: string, route: Route, apiKey: string, connections: number, seconds: number): Load.LoadOptions => {
  const auth = { authorization: `Bearer ${apiKey}` }
  return route === LIST
    ? { url, path: "/api/v1/leads?limit=50", headers: auth, connections, seconds }
    : {
        url,
        path: "/api/v1/leads",
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        next: () => ({
          body: JSON.stringify({ name: "Bench lead", phone: nextPhone() }),
          headers: { "idempotency-key": nextKey() }
        }),
        connections,
        seconds
      }
}

/** `total` connections over `servers`, as evenly as they go. */
const spread = (total: number, servers: number) =>
  Array.from({ length: servers }, (_, i) => Math.floor(total / servers) + (i < total % servers ? 1 : 0))

const together = (urls: ReadonlyArray<string>, route: Route, apiKey: string, seconds: number) =>
  Load.runTogether(
    spread(CONNECTIONS, urls.length).map((connections, i) => loadOf(urls[i]!, route, apiKey, connections, seconds))
  )

const post = async (url: string, path: string, auth: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${auth}`, "content-type": "application/json", "idempotency-key": nextKey() },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${text}`)
  return JSON.parse(text)
}

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a")

interface Row {
  readonly processes: number
  readonly route: Route
  readonly runs: ReadonlyArray<Load.LoadResult>
}

const summarize = (runs: ReadonlyArray<Load.LoadResult>) => ({
  requestsPerSecond: Load.median(runs.map((r) => r.requestsPerSecond)),
  p50: Load.median(runs.map((r) => r.p50)),
  p99: Load.median(runs.map((r) => r.p99)),
  failed: runs.reduce((sum, r) => sum + r.non2xx + r.errors, 0)
})

/** The table both files show: medians over the rounds, and each count's req/s against one process's. */
const table = (rows: ReadonlyArray<Row>): Array<string> => {
  const lines = [
    "| server processes | route | req/s | p50 ms | p99 ms | req/s against 1 process | non-2xx and errors |",
    "|---|---|---|---|---|---|---|"
  ]
  for (const route of ROUTES) {
    const single = rows.find((row) => row.route === route && row.processes === 1)
    for (const row of rows.filter((r) => r.route === route)) {
      const s = summarize(row.runs)
      const ratio = single === undefined ? Number.NaN : s.requestsPerSecond / summarize(single.runs).requestsPerSecond
      lines.push(
        `| ${row.processes} | \`${route}\` | ${fixed(s.requestsPerSecond, 0)} | ${fixed(s.p50)} | ${fixed(s.p99)} | ${fixed(ratio, 2)} | ${s.failed} |`
      )
    }
  }
  return lines
}

const main = async () => {
  Processes.pinSelf(LOAD_CORE)
  const database = await Postgres.freshDatabase("scaling")
  const running: Array<Processes.Running> = []
  try {
    const code = Checkout.describe()
    const load1 = loadavg()[0]!
    const most = Math.max(...COUNTS)
    // The first migrates the database; the others find it migrated.
    const env = { LEADLINE_HEAP_TRIM_SECONDS: "30" }
    running.push(await Processes.leadline(database.url, env, undefined, SERVER_CORES))
    for (let i = 1; i < most; i++) running.push(await Processes.leadline(database.url, env, undefined, SERVER_CORES))
    const urls = running.map((server) => server.url)
    log(`${running.length} servers on ${database.name} (${SERVER_CORES === "0" ? "core 0" : `cores ${SERVER_CORES}`})`)

    const account = await post(urls[0]!, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Scaling" })
    const key = account.api_key as string
    // The account's leads, made through every server in turn.
    for (let from = 0; from < LEADS; from += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, LEADS - from) }, (_, i) =>
          post(urls[(from + i) % urls.length]!, "/api/v1/leads", key, { name: `Seed ${from + i}`, phone: nextPhone() })
        )
      )
    }
    for (const url of urls) {
      const response = await fetch(`${url}/api/v1/leads?limit=1`, { headers: { authorization: `Bearer ${key}` } })
      const body = (await response.json()) as { meta?: { total?: number } }
      if (response.status !== 200 || body.meta?.total !== LEADS) {
        throw new Error(`${url} lists ${JSON.stringify(body.meta)} (${response.status}), not ${LEADS} leads`)
      }
    }

    const rows: Array<Row & { runs: Array<Load.LoadResult> }> = COUNTS.flatMap((processes) =>
      ROUTES.map((route) => ({ processes, route, runs: [] as Array<Load.LoadResult> }))
    )
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < COUNTS.length; i++) {
        const processes = COUNTS[(i + round) % COUNTS.length]!
        const loaded = urls.slice(0, processes)
        for (const route of round % 2 === 0 ? ROUTES : [...ROUTES].reverse()) {
          await together(loaded, route, key, WARMUP_SECONDS)
          const result = await together(loaded, route, key, SECONDS)
          rows.find((row) => row.processes === processes && row.route === route)!.runs.push(result)
          log(
            `round ${round + 1}, ${processes} process(es), ${route}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`
          )
        }
      }
    }
    const postgres = await Postgres.version(database.url)
    for (const server of running) await server.stop()
    running.length = 0

    const date = new Date().toISOString().slice(0, 10)
    const settings = `${ROUNDS} round${ROUNDS === 1 ? "" : "s"} of ${SECONDS} s after ${WARMUP_SECONDS} s of warm-up, ${CONNECTIONS} connections in all spread across the loaded servers`
    const sharing =
      CORES <= 2
        ? `On this ${CORES}-core machine every server process shares core 0 (the load generator has core 1, PostgreSQL floats over both): more processes share the same cores, so the figures show what the processes cost one another on one machine, not what more machines would add.`
        : `The servers share cores ${SERVER_CORES} (the load generator has core ${LOAD_CORE}; PostgreSQL floats over all ${CORES}).`
    const shown = table(rows)
    const report = [
      "# Scaling benchmark: server processes on one database",
      "",
      `\`npm run bench:scaling\` on ${date} (${code}): ${cpus()[0]?.model ?? "?"}, ${CORES} cores, ${Math.round(totalmem() / 2 ** 30)} GiB,`,
      `Node ${process.version}, PostgreSQL ${postgres}; ${Processes.pinning === "not pinned (no taskset)" ? "not pinned (no taskset)" : "pinned with taskset"}; load average ${fixed(load1, 2)} at the start.`,
      `${settings}; the process counts alternate within each round (each round starts with the next).`,
      "",
      `${most} Leadline servers run on one fresh database, with one account of ${LEADS.toLocaleString("en-US")} leads and its owner's full-access key;`,
      "a run loads the first 1, 2 or 4 of them together on one route (a server not loaded meanwhile only polls its queues).",
      "`GET /api/v1/leads?limit=50` is the account's first page; `POST /api/v1/leads (one account)` creates leads in that account,",
      "each request with a new phone and a new `Idempotency-Key`. req/s is the sum over the loaded servers; p50 and p99 come from",
      "their latencies merged (autocannon's histograms), in whole milliseconds. Medians over the rounds. Each server has its own",
      "pool of 10 connections, so 4 servers hold up to 40 on the database.",
      "",
      sharing,
      "",
      ...shown,
      "",
      "Requests per second, round by round:",
      "",
      `| server processes | route | ${Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}`).join(" | ")} |`,
      `|---|---|${Array.from({ length: ROUNDS }, () => "---|").join("")}`,
      ...rows.map(
        (row) =>
          `| ${row.processes} | \`${row.route}\` | ${row.runs.map((r) => fixed(r.requestsPerSecond, 0)).join(" | ")} |`
      ),
      ""
    ]
    writeFileSync(join(here, "SCALING.md"), report.join("\n"))
    const doc = readFileSync(DOC, "utf8")
    const start = doc.indexOf(BEGIN)
    const end = doc.indexOf(END)
    if (start < 0 || end < start) throw new Error(`docs/scaling.md has no ${BEGIN} … ${END} markers`)
    const filled = [
      BEGIN,
      `Measured by \`npm run bench:scaling\` on ${date} (${code}; ${settings}; bench/SCALING.md has the rounds). ${sharing}`,
      "",
      ...shown,
      ""
    ].join("\n")
    writeFileSync(DOC, `${doc.slice(0, start)}${filled}${doc.slice(end)}`)
    log("wrote bench/SCALING.md and the table of docs/scaling.md")
  } finally {
    for (const server of running) await server.stop()
    await database.drop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})

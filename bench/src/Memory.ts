import { mkdtempSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"
import { post } from "./Http.ts"

/**
 * `npm run bench:memory`: does a server's resident set grow under a long load? Leadline on
 * PostgreSQL and on its embedded database, side by side, each under its own load for
 * BENCH_MEMORY_MINUTES (10): 10 s of creates, then 10 s of first pages, in turn, at 10
 * connections. Each resident set (VmRSS) is read at idle, after every 30 s, and after a rest
 * (BENCH_REST_SECONDS, 15). Growth is the slope of a least-squares line through the readings of
 * the second half (the first half is the heap finding its size). Writes bench/MEMORY.md.
 */

const MINUTES = Number(process.env.BENCH_MEMORY_MINUTES ?? 10)
const REST_SECONDS = Number(process.env.BENCH_REST_SECONDS ?? 15)
const CHUNK_SECONDS = 10
const CONNECTIONS = 10
const here = join(import.meta.dirname, "..")
const log = (line: string) => console.log(`[bench:memory ${new Date().toISOString().slice(11, 19)}] ${line}`)
const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000))

let phone = 3_000_000
let key = 0
const create = (url: string, apiKey: string): Load.LoadOptions => ({
  url,
  path: "/api/v1/leads",
  method: "POST",
  headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
  next: () => ({
    body: JSON.stringify({ name: "Memory lead", phone: `+1415${phone++}` }),
    headers: { "idempotency-key": `memory-${process.pid}-${key++}` }
  }),
  connections: CONNECTIONS,
  seconds: CHUNK_SECONDS
})
const list = (url: string, apiKey: string): Load.LoadOptions => ({
  url,
  path: "/api/v1/leads?limit=50",
  headers: { authorization: `Bearer ${apiKey}` },
  connections: CONNECTIONS,
  seconds: CHUNK_SECONDS
})

/** MB per minute: the least-squares slope of (minute, MB). */
const slope = (points: ReadonlyArray<readonly [number, number]>) => {
  const n = points.length
  if (n < 2) return Number.NaN
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0)
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0)
  return sxy / sxx
}

const main = async () => {
  const database = await Postgres.freshDatabase("memory")
  const servers: Array<{ name: string; running: Processes.Running; key: string }> = []
  try {
    const onPostgres = await Processes.leadline(database.url)
    const embedded = await Processes.leadlineEmbedded(mkdtempSync(join(tmpdir(), "leadline-bench-memory-")))
    for (const [name, running] of [
      ["PostgreSQL", onPostgres],
      ["embedded", embedded]
    ] as const) {
      const account = await post(running.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Memory" })
      servers.push({ name, running, key: account.api_key })
    }
    await sleep(Processes.IDLE_SECONDS)
    const idle = servers.map((server) => Processes.residentMB(server.running.process.pid))
    log(`idle ${JSON.stringify(idle)}`)
    const readings: Array<Array<readonly [number, number]>> = servers.map(() => [])
    const requests = servers.map(() => 0)
    const failures = servers.map(() => 0)
    const started = performance.now()
    let chunk = 0
    while (performance.now() - started < MINUTES * 60_000) {
      const results = await Promise.all(
        servers.map((server) =>
          Load.run(chunk % 2 === 0 ? create(server.running.url, server.key) : list(server.running.url, server.key))
        )
      )
      results.forEach((result, i) => {
        requests[i] += result.requestsPerSecond * CHUNK_SECONDS
        failures[i] += result.non2xx + result.errors
      })
      chunk++
      if (chunk % 3 === 0) {
        const minute = (performance.now() - started) / 60_000
        servers.forEach((server, i) => {
          readings[i]!.push([minute, Processes.residentMB(server.running.process.pid)])
        })
        log(`${minute.toFixed(1)} min ${JSON.stringify(readings.map((r) => r.at(-1)![1]))}`)
      }
    }
    const loaded = servers.map((server) => Processes.residentMB(server.running.process.pid))
    await sleep(REST_SECONDS)
    const rested = servers.map((server) => Processes.residentMB(server.running.process.pid))
    const rows = servers.map((server, i) => {
      const all = readings[i]!
      const secondHalf = all.filter(([minute]) => minute >= MINUTES / 2)
      const growth = slope(secondHalf)
      return `| ${server.name} | ${idle[i]} | ${Math.min(...all.map(([, mb]) => mb))}-${Math.max(...all.map(([, mb]) => mb))} | ${loaded[i]} | ${rested[i]} | ${(rested[i]! / idle[i]!).toFixed(2)} | ${growth.toFixed(2)} | ${Math.round(requests[i]!).toLocaleString("en")} | ${failures[i]} |`
    })
    const series = servers
      .map(
        (server, i) =>
          `- ${server.name}: ${readings[i]!.map(([minute, mb]) => `${minute.toFixed(1)} min ${mb}`).join(", ")}`
      )
      .join("\n")
    writeFileSync(
      join(here, "MEMORY.md"),
      `# Memory under a long load

\`npm run bench:memory -w @leadline/bench\` on ${new Date().toISOString().slice(0, 10)}: ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, Node ${process.version}.
Leadline on PostgreSQL and on its embedded database, side by side, each under its own load for ${MINUTES} minutes at ${CONNECTIONS}
connections: ${CHUNK_SECONDS} s of \`POST /api/v1/leads\` (new phone, new \`Idempotency-Key\`), then ${CHUNK_SECONDS} s of the first page of leads, in turn.
Resident set (VmRSS, MB): at idle (${Processes.IDLE_SECONDS} s after start, no request), every 30 s under the load, right after it,
and after ${REST_SECONDS} s of rest. Growth: the least-squares slope through the readings of the second half, MB per minute
(the first half is the heap finding its size). Targets (issue 31): back within 1.5× of idle after the rest, no growth.

| server | idle | under the load | right after | after the rest | rest ÷ idle | growth MB/min | requests | non-2xx and errors |
|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}

Readings under the load:
${series}
`
    )
    log("wrote bench/MEMORY.md")
  } finally {
    for (const server of servers) await server.running.stop()
    await database.drop()
  }
}

await main()

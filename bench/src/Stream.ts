/**
 * `npm run bench:stream -w @leadline/bench`: issue 34's figure on PostgreSQL. One server process,
 * `STREAM_CONNECTIONS` (1,000) open `GET /api/v1/stream` connections of one account, and leads
 * of that account created through the API one at a time (`STREAM_EVENTS`, 100, one every
 * `STREAM_EVENT_GAP_MS`, 50): for each event, the delay from the create's answer reaching the
 * client to each stream's receipt of its `lead.created` (p50, p99 over every stream and event;
 * target p99 ≤ 100 ms). Then the API's own latency: `POST /api/v1/leads` in another account
 * (`STREAM_API_REQUESTS`, 1,000, `STREAM_API_CONCURRENCY`, 4, at a time; each commit wakes the
 * fan-out, which reads the log) while the streamed account gets an event every
 * `STREAM_EVENT_GAP_MS`, once with no stream open and once with the streams open (target: p99
 * with ≤ 1.5× p99 without). The streams are opened and read by a process of their own
 * (`StreamClients.ts`), so the API's latency is timed by a client that parses none of them; both
 * share core 1, the server has core 0 (when taskset exists). The events' delays include the
 * streams' client parsing every message. Writes bench/STREAM.md.
 */
import { fork } from "node:child_process"
import { writeFileSync } from "node:fs"
import { cpus, loadavg, totalmem } from "node:os"
import { join } from "node:path"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"
import { post } from "./Http.ts"

const CONNECTIONS = Number(process.env.STREAM_CONNECTIONS ?? 1_000)
const EVENTS = Number(process.env.STREAM_EVENTS ?? 100)
const EVENT_GAP_MS = Number(process.env.STREAM_EVENT_GAP_MS ?? 50)
const API_REQUESTS = Number(process.env.STREAM_API_REQUESTS ?? 1_000)
const API_CONCURRENCY = Number(process.env.STREAM_API_CONCURRENCY ?? 4)
const LATENCY_TARGET_MS = 100
const API_TARGET = 1.5
const here = join(import.meta.dirname, "..")
const log = (line: string) => console.log(`[bench:stream ${new Date().toISOString().slice(11, 19)}] ${line}`)

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
}

let phone = 0
const createLead = async (url: string, key: string) => {
  const started = performance.now()
  const response = await fetch(`${url}/api/v1/leads`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Stream bench", phone: `+1415${String(5_000_000 + phone++).padStart(7, "0")}` })
  })
  const body = (await response.json()) as { id: string }
  if (response.status !== 201) throw new Error(`POST /api/v1/leads: ${response.status} ${JSON.stringify(body)}`)
  // Absolute, to compare with the streams' process's receipts.
  return { id: body.id, answeredAt: performance.timeOrigin + performance.now(), millis: performance.now() - started }
}

/**
 * `API_REQUESTS` creates with `apiKey`, `API_CONCURRENCY` at a time, while `streamedKey`'s account
 * gets an event every `EVENT_GAP_MS`: each request's latency.
 */
const apiLatencies = async (url: string, apiKey: string, streamedKey: string) => {
  const latencies: Array<number> = []
  let left = API_REQUESTS
  let done = false
  const background = (async () => {
    while (!done) {
      await createLead(url, streamedKey)
      await new Promise((resolve) => setTimeout(resolve, EVENT_GAP_MS))
    }
  })()
  await Promise.all(
    Array.from({ length: API_CONCURRENCY }, async () => {
      while (left-- > 0) latencies.push((await createLead(url, apiKey)).millis)
    })
  )
  done = true
  await background
  return latencies
}

const main = async () => {
  Processes.pinSelf()
  const db = await Postgres.freshDatabase("stream")
  const server = await Processes.leadline(db.url)
  const clients = fork(join(import.meta.dirname, "StreamClients.ts"), [], {
    execArgv: ["--conditions=@leadline/source"],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const ask = <A>(message: unknown) =>
    new Promise<A>((resolve, reject) => {
      clients.once("message", (answer) => resolve(answer as A))
      clients.once("error", reject)
      clients.send(message as object)
    })
  // It inherits this process's core (pinSelf above), so the two share core 1.
  try {
    const account = await post(server.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, {
      name: "Stream",
      plan_id: "scale"
    })
    const key = account.api_key as string
    const other = await post(server.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "API", plan_id: "scale" })
    const apiKey = other.api_key as string
    const target = { baseUrl: server.url, adminToken: Processes.ADMIN_TOKEN }
    // Warm the server's paths before any measurement.
    for (let i = 0; i < 50; i++) await createLead(server.url, i % 2 === 0 ? key : apiKey)

    log(`API with no stream open: ${API_REQUESTS} creates, ${API_CONCURRENCY} at a time`)
    const alone = await apiLatencies(server.url, apiKey, key)

    log(`opening ${CONNECTIONS} streams (in their own process)`)
    const { opened } = await ask<{ opened: number }>({
      open: { baseUrl: target.baseUrl, adminToken: target.adminToken, key, connections: CONNECTIONS }
    })
    if (opened !== CONNECTIONS) throw new Error(`${opened} streams opened of ${CONNECTIONS}`)

    log(`${EVENTS} events, one every ${EVENT_GAP_MS} ms`)
    const created: Array<{ id: string; answeredAt: number }> = []
    for (let i = 0; i < EVENTS; i++) {
      created.push(await createLead(server.url, key))
      await new Promise((resolve) => setTimeout(resolve, EVENT_GAP_MS))
    }
    const lastId = created.at(-1)!.id
    const { received } = await ask<{ received: ReadonlyArray<ReadonlyArray<readonly [string, number]>> }>({
      collect: { ids: created.map((lead) => lead.id), lastId }
    })
    const answered = new Map(created.map((lead) => [lead.id, lead.answeredAt]))
    const delays: Array<number> = []
    let missing = 0
    for (const stream of received) {
      const seen = new Set<string>()
      for (const [leadId, at] of stream) {
        seen.add(leadId)
        // A stream may hear of the lead before the creator has read its answer: no delay, then.
        delays.push(Math.max(0, at - answered.get(leadId)!))
      }
      missing += created.length - seen.size
    }

    log(`API with the streams open: ${API_REQUESTS} creates`)
    const withStreams = await apiLatencies(server.url, apiKey, key)
    await ask({ close: true })

    const p50 = percentile(delays, 50)
    const p99 = percentile(delays, 99)
    const aloneP99 = percentile(alone, 99)
    const withP99 = percentile(withStreams, 99)
    const ratio = withP99 / aloneP99
    const fixed = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : "n/a")
    const mark = (ok: boolean) => (ok ? "met" : "**missed**")
    const lines = [
      "# Event stream benchmark",
      "",
      `Generated by \`npm run bench:stream -w @leadline/bench\` on ${new Date().toISOString()} (issue 34). One server`,
      `process on PostgreSQL ${await Postgres.version(db.url)}, ${CONNECTIONS} \`GET /api/v1/stream\` connections of one`,
      `account, opened and read by a process of their own (the API timed from another). ${Processes.pinning}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"},`,
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB, load ${loadavg()
        .map((n) => n.toFixed(2))
        .join(" ")} at the end.`,
      "",
      "## An event's way to every stream",
      "",
      `${EVENTS} leads created through the API one at a time, ${EVENT_GAP_MS} ms apart; for each, the delay from its`,
      "create's answer reaching the client to each stream's receipt of its `lead.created` (the client's own",
      "parsing of every stream included).",
      "",
      "| streams | events | deliveries | missing | p50 ms | p99 ms | target p99 ≤ 100 ms |",
      "|---|---|---|---|---|---|---|",
      `| ${CONNECTIONS} | ${EVENTS} | ${delays.length} | ${missing} | ${fixed(p50)} | ${fixed(p99)} | ${mark(p99 <= LATENCY_TARGET_MS && missing === 0)} |`,
      "",
      "## The API's own latency",
      "",
      `\`POST /api/v1/leads\` in another account than the streams', ${API_REQUESTS} requests ${API_CONCURRENCY} at a time (each`,
      `commit wakes the fan-out, which reads the log), while the streamed account gets an event every ${EVENT_GAP_MS} ms: with`,
      `no stream open, then with the ${CONNECTIONS} streams open (each of those events going out to all of them).`,
      "",
      "| | p50 ms | p99 ms |",
      "|---|---|---|",
      `| no stream open | ${fixed(percentile(alone, 50))} | ${fixed(aloneP99)} |`,
      `| ${CONNECTIONS} streams open | ${fixed(percentile(withStreams, 50))} | ${fixed(withP99)} |`,
      "",
      `p99 ratio ${fixed(ratio)}× (target ≤ ${API_TARGET}×): ${mark(ratio <= API_TARGET)}.`,
      ""
    ]
    writeFileSync(join(here, "STREAM.md"), lines.join("\n"))
    log(
      `p50 ${fixed(p50)} ms, p99 ${fixed(p99)} ms, missing ${missing}; API p99 ${fixed(aloneP99)} → ${fixed(withP99)} ms`
    )
  } finally {
    clients.kill()
    await server.stop()
    await db.drop()
  }
}

await main()

import { writeFileSync } from "node:fs"
import { cpus } from "node:os"
import { join } from "node:path"
import pg from "pg"
import * as Checkout from "./Checkout.ts"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"

/**
 * `npm run bench:campaigns`: issue 12's figures on PostgreSQL. A campaign to
 * BENCH_CAMPAIGN_LEADS (100,000) leads is queued through the API and sent by one
 * `leadline worker` to the simulator (no rate limit, statuses played at once); the server
 * serves the API with its own sender off, as in bench:messaging.
 * - Queue: the wall time of `POST /api/v1/campaigns/{id}/queue` (target ≤ 10 s).
 * - Send: recipients per second from the queue's answer until none is queued (≥ 1,000/s), and
 *   that every one was sent (`stats.sent`: accepted by the simulator).
 * - Reads: BENCH_CAMPAIGN_CONNECTIONS (2) closed-loop connections on each of the first page of
 *   `GET /api/v1/leads` and `GET /api/me`, each pausing BENCH_CAMPAIGN_PAUSE_MS (20) between
 *   requests, idle for BENCH_SECONDS (10) before the queue, then while it sends: p99 during /
 *   p99 idle (≤ 2).
 * Where the server's autovacuum is off, the run vacuums messages and threads every
 * BENCH_CAMPAIGN_VACUUM_SECONDS (60) in its place. Writes bench/CAMPAIGNS.md.
 */

const LEADS = Number(process.env.BENCH_CAMPAIGN_LEADS ?? 100_000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CAMPAIGN_CONNECTIONS ?? 2)
const PAUSE_MS = Number(process.env.BENCH_CAMPAIGN_PAUSE_MS ?? 20)
const WARMUP_SECONDS = 3
/** Where the server's autovacuum is off: how often the run vacuums in its place (0: never). */
const VACUUM_SECONDS = Number(process.env.BENCH_CAMPAIGN_VACUUM_SECONDS ?? 60)
/** A run that has not sent everything by then is reported as it stands. */
const GIVE_UP_MS = 900_000
const SECRET = "bench-app-secret"
const here = join(import.meta.dirname, "..")
const log = (line: string) => console.log(`[bench:campaigns] ${line}`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// Phones are +1415 then 2000000 + 10·i: a valid exchange, unique, and never ending in 0001 to
// 0005 (the simulator's scripted failures), which holds up to this many leads.
const MAX_LEADS = 799_999
if (!Number.isInteger(LEADS) || LEADS < 1 || LEADS > MAX_LEADS) {
  throw new Error(
    `BENCH_CAMPAIGN_LEADS: ${process.env.BENCH_CAMPAIGN_LEADS} is not a lead count from 1 to ${MAX_LEADS}`
  )
}

/** The code measured: the commit, and whether the servers' sources differed from it when they started. */

const call = async (url: string, method: string, path: string, auth: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${auth}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = text
  }
  return { status: response.status, body: json }
}

const expect = (what: string, response: { status: number; body: unknown }, status: number) => {
  if (response.status !== status) {
    throw new Error(`${what}: ${response.status} (expected ${status}): ${JSON.stringify(response.body)}`)
  }
  return response.body as any
}

/** The last lines a process wrote, and every warning or error: what to show when a step fails. */
const tail = (running: Processes.Running, name: string) => {
  const lines: Array<string> = []
  const notable: Array<string> = []
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) {
      if (line.trim() === "") continue
      lines.push(line)
      if (lines.length > 100) lines.shift()
      if (/warn|error|fatal/i.test(line) && notable.length < 200) notable.push(line)
    }
  }
  running.process.stdout!.on("data", onData)
  running.process.stderr!.on("data", onData)
  return () =>
    `--- ${name}: warnings and errors ---\n${notable.join("\n")}\n--- ${name}: last lines ---\n${lines.join("\n")}`
}

interface Sample {
  /** performance.now() when the request started: which phase it belongs to. */
  readonly at: number
  readonly ms: number
  readonly ok: boolean
}

/**
 * Closed-loop GETs on one route, every latency kept: the idle and sending windows are cut
 * from one run afterwards, since how long the sending lasts is only known at its end
 * (autocannon runs for a fixed time and keeps no samples). Each connection pauses between
 * requests: without a pause four connections keep the server's core busy, and the worker,
 * pinned to the same core, sent a quarter as fast (a user reading the app is not a flood).
 */
const probe = (url: string, path: string, key: string, connections: number) => {
  const samples: Array<Sample> = []
  let running = true
  const loop = async () => {
    while (running) {
      const at = performance.now()
      try {
        const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } })
        await response.arrayBuffer()
        samples.push({ at, ms: performance.now() - at, ok: response.status === 200 })
      } catch {
        samples.push({ at, ms: performance.now() - at, ok: false })
      }
      if (PAUSE_MS > 0) await sleep(PAUSE_MS)
    }
  }
  const loops = Array.from({ length: connections }, loop)
  return {
    between: (from: number, to: number) => {
      const chosen = samples.filter((sample) => sample.at >= from && sample.at < to)
      const ms = chosen.map((sample) => sample.ms)
      return {
        requests: chosen.length,
        perSecond: chosen.length / ((to - from) / 1000),
        p50: Load.percentile(ms, 50),
        p99: Load.percentile(ms, 99),
        max: Math.max(...ms),
        failed: chosen.filter((sample) => !sample.ok).length
      }
    },
    stop: async () => {
      running = false
      await Promise.all(loops)
    }
  }
}

type Window = ReturnType<ReturnType<typeof probe>["between"]>

const ms = (value: number) => value.toFixed(1)
const describe = (window: Window) =>
  `p50 ${ms(window.p50)} ms, p99 ${ms(window.p99)} ms, max ${ms(window.max)} ms (${window.requests} requests, ${window.perSecond.toFixed(0)}/s, ${window.failed} failed)`
const met = (ok: boolean) => (ok ? "met" : "not met")

const main = async () => {
  const db = await Postgres.freshDatabase("campaigns")
  const running: Array<Processes.Running> = []
  const logs: Array<() => string> = []
  const probes: Array<ReturnType<typeof probe>> = []
  try {
    Processes.pinSelf()
    const code = Checkout.describe()
    const server = await Processes.leadline(db.url, {
      WHATSAPP_APP_SECRET: SECRET,
      WHATSAPP_VERIFY_TOKEN: "bench",
      WHATSAPP_SENDER_ENABLED: "false"
    })
    running.push(server)
    logs.push(tail(server, "server"))
    // Sending from the start, as in a deployment: the queue's messages are claimed as soon as they commit.
    const worker = await Processes.worker(db.url, {
      WHATSAPP_APP_SECRET: SECRET,
      WHATSAPP_VERIFY_TOKEN: "bench",
      WHATSAPP_SEND_RATE: "0",
      WHATSAPP_SIMULATOR_DELAYS_MS: "0,0,0"
    })
    running.push(worker)
    logs.push(tail(worker, "worker"))

    const account = expect(
      "account",
      await call(server.url, "POST", "/admin/v1/accounts", Processes.ADMIN_TOKEN, {
        name: "Campaigns",
        plan_id: "scale"
      }),
      201
    )
    const key = account.api_key as string
    const channel = expect(
      "channel",
      await call(server.url, "POST", "/api/v1/channels", key, {
        type: "whatsapp",
        name: "Bench",
        phone_number_id: "100200301",
        display_phone_number: "+1 650 555 1111",
        access_token: "bench"
      }),
      201
    )

    // The audience straight in the table (100,000 creates through the API would take minutes), with
    // the lead counter in step so the list's total is right. The newest lead is the last one.
    const seeding = Date.now()
    await Postgres.query(
      db.url,
      `WITH inserted AS (
         INSERT INTO leads (account_id, id, name, phone, email, tags, status, assigned_user_id, attributes, created_at, updated_at)
         SELECT $1::uuid, 'ld_' || lpad(i::text, 26, '0'), 'Lead ' || i, '+1415' || (2000000 + i * 10)::text, NULL,
                '["newsletter"]'::jsonb, 'new', NULL, '{}'::jsonb,
                now() - ($2::int - i) * interval '1 millisecond', now() - ($2::int - i) * interval '1 millisecond'
         FROM generate_series(1, $2::int) AS i RETURNING 1)
       INSERT INTO lead_counts (account_id, stripe, total) SELECT $1::uuid, 0, count(*) FROM inserted
       ON CONFLICT (account_id, stripe) DO UPDATE SET total = lead_counts.total + excluded.total`,
      [account.account_id, LEADS]
    )
    // Statistics and the visibility map, as autovacuum would have made them after such a load.
    await Postgres.query(db.url, "VACUUM (ANALYZE) leads")
    await Postgres.query(db.url, "ANALYZE")
    log(`seeded ${LEADS} leads in ${((Date.now() - seeding) / 1000).toFixed(1)} s`)
    const listed = expect("leads", await call(server.url, "GET", "/api/v1/leads?limit=1", key), 200)
    if (listed.meta?.total !== LEADS) throw new Error(`the account lists ${JSON.stringify(listed.meta)}, not ${LEADS}`)

    const campaign = expect(
      "campaign",
      await call(server.url, "POST", "/api/v1/campaigns", key, {
        name: "Bench",
        channel_id: channel.id,
        template: {
          name: "restock_alert",
          language: "en_US",
          components: [{ type: "body", parameters: [{ type: "text", text: "{{lead.name}}" }] }]
        },
        audience: { tags: ["newsletter"], statuses: [], lead_ids: [], exclude_tags: [] }
      }),
      201
    )
    if (campaign.audience_count !== LEADS) {
      throw new Error(`the draft's audience_count is ${campaign.audience_count}, not ${LEADS}`)
    }

    // Reads throughout: warm-up, idle, the queue request, the sending; cut into windows afterwards.
    const list = probe(server.url, "/api/v1/leads", key, CONNECTIONS)
    const me = probe(server.url, "/api/me", key, CONNECTIONS)
    probes.push(list, me)
    await sleep(WARMUP_SECONDS * 1000)
    const idleFrom = performance.now()
    await sleep(SECONDS * 1000)
    const queueFrom = performance.now()
    log(`idle: leads ${describe(list.between(idleFrom, queueFrom))}; me ${describe(me.between(idleFrom, queueFrom))}`)

    const queueResponse = await call(server.url, "POST", `/api/v1/campaigns/${campaign.id}/queue`, key)
    const queueTo = performance.now()
    const queueSeconds = (queueTo - queueFrom) / 1000
    log(`queue: ${queueResponse.status} in ${queueSeconds.toFixed(2)} s`)
    if (queueResponse.status !== 200) {
      for (const lines of logs) console.log(lines())
      throw new Error(
        `queue: ${queueResponse.status} after ${queueSeconds.toFixed(2)} s: ${JSON.stringify(queueResponse.body)}`
      )
    }
    const queued = queueResponse.body
    if (queued.stats?.total !== LEADS) throw new Error(`queued with stats ${JSON.stringify(queued.stats)}`)

    // The ends are read from the database, four times a second: the campaign's stats through the
    // API count its 100,000 messages (about 300 ms of PostgreSQL each), which, polled as often,
    // would take a good part of the database from the sending it measures. The API's view is
    // logged every 5 s and read at the end. The rate counts from the queue's answer, when the
    // messages became visible to the worker.
    const watcher = new pg.Client({ connectionString: db.url })
    await watcher.connect()
    const still = async (statuses: string) =>
      (
        await watcher.query(
          `SELECT EXISTS (SELECT 1 FROM messages WHERE account_id = $1::uuid AND campaign_id = $2
                          AND status = ANY($3::text[])) AS found`,
          [account.account_id, campaign.id, statuses.split(",")]
        )
      ).rows[0].found as boolean
    const campaignStatus = async () =>
      (
        await watcher.query("SELECT status FROM campaigns WHERE account_id = $1::uuid AND id = $2", [
          account.account_id,
          campaign.id
        ])
      ).rows[0].status as string
    // This machine's PostgreSQL runs with autovacuum off (a CI setting); a deployment's would
    // vacuum and analyze messages and threads within a minute of such writes, so the run does it
    // on autovacuum's schedule instead, one pass at a time.
    const autovacuumOff =
      (await watcher.query("SELECT current_setting('autovacuum') AS v")).rows[0].v === "off" && VACUUM_SECONDS > 0
    let vacuums = 0
    // Where the first pass ends and how much is left then: the rate once the statistics know the messages.
    let firstVacuum: { at: number; queued: number } | undefined
    let vacuuming: Promise<void> | undefined
    let nextVacuum = queueTo + VACUUM_SECONDS * 1000
    let nextLog = queueTo + 5000
    let drainedAt: number | undefined
    let completedAt: number | undefined
    let settledAt: number | undefined
    let status = queued.status as string
    while (performance.now() - queueTo < GIVE_UP_MS) {
      await sleep(250)
      const now = performance.now()
      if (drainedAt === undefined && !(await still("queued"))) drainedAt = now
      // Every status the simulator plays back is in: each message is read, failed or cancelled.
      if (drainedAt !== undefined && settledAt === undefined && !(await still("sent,delivered"))) settledAt = now
      status = await campaignStatus()
      if (completedAt === undefined && status === "completed") completedAt = now
      if (drainedAt !== undefined && completedAt !== undefined && settledAt !== undefined) break
      if (status === "failed" || status === "cancelled") break
      if (autovacuumOff && vacuuming === undefined && now >= nextVacuum) {
        vacuuming = Postgres.query(db.url, "VACUUM (ANALYZE) messages, conversations").then(async () => {
          if (vacuums === 0) {
            const [left] = await Postgres.query<{ n: string }>(
              db.url,
              "SELECT count(*) AS n FROM messages WHERE account_id = $1::uuid AND campaign_id = $2 AND status = 'queued'",
              [account.account_id, campaign.id]
            )
            firstVacuum = { at: performance.now(), queued: Number(left!.n) }
          }
          vacuums++
          vacuuming = undefined
          nextVacuum = performance.now() + VACUUM_SECONDS * 1000
        })
      }
      if (now >= nextLog) {
        nextLog = now + 5000
        const view = expect("progress", await call(server.url, "GET", `/api/v1/campaigns/${campaign.id}`, key), 200)
        log(`after ${((now - queueTo) / 1000).toFixed(0)} s: ${view.status} ${JSON.stringify(view.stats)}`)
      }
    }
    await vacuuming
    await watcher.end()
    const progress = expect("progress", await call(server.url, "GET", `/api/v1/campaigns/${campaign.id}`, key), 200)
    const drainedTo = drainedAt ?? performance.now()
    await list.stop()
    await me.stop()
    probes.length = 0
    const stats = progress.stats as Record<string, number>
    const drained = (drainedTo - queueTo) / 1000
    const sendRate = (LEADS - stats.queued!) / drained
    const after = (at: number | undefined) => (at === undefined ? "never" : `${((at - queueTo) / 1000).toFixed(1)} s`)
    log(
      `send: ${stats.sent} of ${LEADS} sent, ${stats.queued} still queued after ${drained.toFixed(1)} s: ${sendRate.toFixed(0)}/s; completed after ${after(completedAt)}, every status in after ${after(settledAt)} (${JSON.stringify(stats)})`
    )

    const afterVacuum =
      firstVacuum === undefined || drainedAt === undefined || firstVacuum.at >= drainedAt
        ? undefined
        : {
            from: (firstVacuum.at - queueTo) / 1000,
            queued: firstVacuum.queued,
            rate: firstVacuum.queued / ((drainedAt - firstVacuum.at) / 1000),
            before: (LEADS - firstVacuum.queued) / ((firstVacuum.at - queueTo) / 1000)
          }
    if (afterVacuum !== undefined) {
      log(
        `before the first vacuum's end (${afterVacuum.from.toFixed(1)} s): ${afterVacuum.before.toFixed(0)}/s; after it (${afterVacuum.queued} queued then): ${afterVacuum.rate.toFixed(0)}/s`
      )
    }

    const idle = { list: list.between(idleFrom, queueFrom), me: me.between(idleFrom, queueFrom) }
    const queueing = { list: list.between(queueFrom, queueTo), me: me.between(queueFrom, queueTo) }
    const sending = { list: list.between(queueTo, drainedTo), me: me.between(queueTo, drainedTo) }
    for (const [name, route] of [
      ["leads", "list"],
      ["me", "me"]
    ] as const) {
      log(`${name} while queueing: ${describe(queueing[route])}`)
      log(
        `${name} while sending: ${describe(sending[route])}; p99 ×${(sending[route].p99 / idle[route].p99).toFixed(2)}`
      )
    }

    const queueMet = queueSeconds <= 10
    const sendMet = sendRate >= 1000 && stats.sent === LEADS
    const readRow = (label: string, route: "list" | "me") => {
      const ratio = sending[route].p99 / idle[route].p99
      return `| ${label} while it sends, ${CONNECTIONS} connections | idle p50 ${ms(idle[route].p50)} ms, p99 ${ms(idle[route].p99)} ms; sending p50 ${ms(sending[route].p50)} ms, p99 ${ms(sending[route].p99)} ms (max ${ms(sending[route].max)} ms, ${sending[route].failed} failed): p99 ×${ratio.toFixed(2)} | p99 ≤ 2× idle | ${met(ratio <= 2 && sending[route].failed === 0)} |`
    }
    writeFileSync(
      join(here, "CAMPAIGNS.md"),
      `# Campaign benchmark (issue 12)

\`npm run bench:campaigns\` on ${new Date().toISOString().slice(0, 10)} (${code}): ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores,
PostgreSQL ${await Postgres.version(db.url)}; ${Processes.pinning}. The machine's cores are shared and noisy:
figures move from run to run, the latency ratios most (they compare milliseconds).

One account on the scale plan, ${LEADS} leads tagged \`newsletter\` loaded straight into PostgreSQL, a draft
campaign of one template message each (\`{{lead.name}}\` in its body) to that tag. The server serves the API
with its sender off; one \`leadline worker\` sends to the simulator (no rate limit; sent, delivered and read
played back at once through the inbound route, in the worker). ${CONNECTIONS} closed-loop connections on each
of the two read routes throughout, each pausing ${PAUSE_MS} ms between requests (without a pause they keep the
server's core busy, and the worker shares it): idle is the ${SECONDS} s before the queue request (after ${WARMUP_SECONDS} s
of warm-up), sending is from the queue's answer until no message is queued, as the database shows it (polled
every 250 ms; the API's stats are read every 5 s and at the end). ${
        autovacuumOff
          ? `This PostgreSQL has autovacuum off, so the run ran \`VACUUM (ANALYZE) messages, conversations\` every ${VACUUM_SECONDS} s
from the queue's answer on, as autovacuum would (${vacuums} passes).`
          : "Autovacuum as the server has it."
      }

| what | result | target | |
|---|---|---|---|
| \`POST /api/v1/campaigns/{id}/queue\`, ${LEADS} recipients | ${queueSeconds.toFixed(2)} s (${queueResponse.status}, \`stats.total\` ${queued.stats.total}) | ≤ 10 s | ${met(queueMet)} |
| sending, from the queue's answer until nothing is queued | ${sendRate.toFixed(0)} messages/s (${drained.toFixed(1)} s); \`stats.sent\` ${stats.sent} of ${LEADS}, failed ${stats.failed}; completed after ${after(completedAt)}, every status in after ${after(settledAt)}${
        afterVacuum === undefined
          ? ""
          : `; ${afterVacuum.before.toFixed(0)}/s until the first vacuum had run (${afterVacuum.from.toFixed(1)} s), ${afterVacuum.rate.toFixed(0)}/s after it`
      } | ≥ 1,000/s, all sent | ${met(sendMet)} |
${readRow("`GET /api/v1/leads` (first page)", "list")}
${readRow("`GET /api/me`", "me")}

While the queue request itself ran (${queueSeconds.toFixed(2)} s; no target): \`GET /api/v1/leads\` ${describe(queueing.list)};
\`GET /api/me\` ${describe(queueing.me)}.

Run it from the repository's root with \`npm run bench:campaigns -w @leadline/bench\` (PostgreSQL at
BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres; a fresh database
is made and dropped). Settings: BENCH_CAMPAIGN_LEADS (100000; 10000 for a quick run), BENCH_SECONDS (the idle
window, 10), BENCH_CAMPAIGN_CONNECTIONS (per read route, 2), BENCH_CAMPAIGN_PAUSE_MS (between a connection's
requests, 20; 0 for back-to-back), BENCH_CAMPAIGN_VACUUM_SECONDS (the vacuum's period where autovacuum is off, 60;
0 for none).
`
    )
    log("wrote bench/CAMPAIGNS.md")
  } finally {
    for (const p of probes) await p.stop()
    for (const process of running.reverse()) await process.stop()
    await db.drop()
  }
}

await main()

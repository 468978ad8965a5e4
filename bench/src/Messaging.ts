import { writeFileSync } from "node:fs"
import { cpus } from "node:os"
import { join } from "node:path"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"

/**
 * `npm run bench:messaging`: issue 11's two figures on PostgreSQL, for Leadline alone (no
 * baseline makes sense for WhatsApp's side).
 * - Inbound: signed Meta batches of 10 text messages posted to /webhooks/whatsapp by
 *   BENCH_MESSAGING_CONNECTIONS (10) connections for BENCH_SECONDS (10): messages stored per
 *   second and the acknowledgement latency.
 * - Outbound: BENCH_OUTBOUND (10,000) queued messages drained by one `leadline worker`
 *   sending to the simulator (no rate limit, statuses played at once through the inbound route).
 * - BENCH_BEFORE (the path of another checkout, installed) and BENCH_BEFORE_LABEL: the inbound
 *   figure of that version too, first, on a database of its own, for before/after in one run.
 * Writes bench/MESSAGING.md.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_MESSAGING_CONNECTIONS ?? 10)
const OUTBOUND = Number(process.env.BENCH_OUTBOUND ?? 10_000)
/** Another checkout of Leadline, installed: its inbound figure is measured in the same run. */
const BEFORE =
  process.env.BENCH_BEFORE === undefined || process.env.BENCH_BEFORE === "" ? undefined : process.env.BENCH_BEFORE
const BEFORE_LABEL = process.env.BENCH_BEFORE_LABEL ?? BEFORE ?? ""
const SECRET = "bench-app-secret"
const NUMBER = "100200300"
const here = join(import.meta.dirname, "..")
const log = (line: string) => console.log(`[bench:messaging] ${line}`)

const post = async (url: string, path: string, auth: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return (await response.json()) as any
}

let sequence = 0
const decoder = new TextDecoder()
/** One Meta webhook body with `size` text messages from as many customers, as Meta serialises it. */
const batch = (size: number): string => {
  const timestamp = new Date()
  return decoder.decode(
    MetaPayloads.inboundTextsPayload(
      NUMBER,
      "16505551111",
      Array.from({ length: size }, () => {
        const n = sequence++
        return {
          from: `1415${String(2_000_000 + (n % 5_000)).padStart(7, "0")}`,
          name: `Customer ${n % 5_000}`,
          text: `Message ${n}`,
          externalId: `wamid.BENCH${n}`,
          timestamp
        }
      })
    )
  )
}

/** The inbound figure on `db` for the server of `checkout`: signed batches, after a warm-up that makes the leads. */
const inboundOn = async (db: { readonly url: string }, running: Array<Processes.Running>, checkout?: string) => {
  const server = await Processes.leadline(
    db.url,
    { WHATSAPP_APP_SECRET: SECRET, WHATSAPP_VERIFY_TOKEN: "bench", WHATSAPP_SENDER_ENABLED: "false" },
    checkout
  )
  running.push(server)
  const account = await post(server.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, {
    name: "Messaging",
    plan_id: "scale"
  })
  const key = account.api_key as string
  const channel = await post(server.url, "/api/v1/channels", key, {
    type: "whatsapp",
    name: "Bench",
    phone_number_id: NUMBER,
    display_phone_number: "+16505551111",
    access_token: "bench"
  })
  const load = (seconds: number) =>
    Load.run({
      url: server.url,
      path: "/webhooks/whatsapp",
      method: "POST",
      headers: { "content-type": "application/json" },
      next: () => {
        const body = batch(10)
        return {
          body,
          headers: { "x-hub-signature-256": MetaSignature.sign(SECRET, new TextEncoder().encode(body)) }
        }
      },
      connections: CONNECTIONS,
      seconds
    })
  await load(3)
  // Statistics, as autovacuum gathers them within a minute of such writes on a running
  // deployment: a fresh database has none, and its first plans are not the ones that last.
  await Postgres.query(db.url, "ANALYZE")
  const count = async () =>
    Number(
      (
        await Postgres.query<{ n: string }>(db.url, "SELECT count(*) AS n FROM messages WHERE direction = 'inbound'")
      )[0]!.n
    )
  const before = await count()
  const started = Date.now()
  const inbound = await load(SECONDS)
  const stored = (await count()) - before
  const rate = stored / ((Date.now() - started) / 1000)
  log(
    `inbound${checkout === undefined ? "" : ` (${BEFORE_LABEL})`}: ${stored} messages in ${SECONDS} s: ${rate.toFixed(0)}/s; ack p50 ${inbound.p50} ms, p99 ${inbound.p99} ms, non-2xx ${inbound.non2xx}`
  )
  return { server, account, channel, inbound, rate }
}

/** The same inbound load on `BENCH_BEFORE`'s checkout, on a database of its own, or nothing. */
const inboundBefore = async () => {
  if (BEFORE === undefined) return undefined
  const db = await Postgres.freshDatabase("messaging_before")
  const running: Array<Processes.Running> = []
  try {
    const { inbound, rate } = await inboundOn(db, running, BEFORE)
    return { inbound, rate }
  } finally {
    for (const process of running.reverse()) await process.stop()
    await db.drop()
  }
}

const main = async () => {
  Processes.pinSelf()
  // Before first: the two runs see the machine in the same hour, and neither inherits the other's database.
  const previous = await inboundBefore()
  const db = await Postgres.freshDatabase("messaging")
  const running: Array<Processes.Running> = []
  try {
    const { account, channel, inbound, rate: inboundRate } = await inboundOn(db, running)

    // Outbound: queue messages straight in the table, as sends would, then let one worker drain them.
    const [conversation] = await Postgres.query<{ id: string; lead_id: string }>(
      db.url,
      // Not one of the simulator's scripted numbers (endings 0001 to 0005 fail, stall or are refused at first).
      "SELECT id, lead_id FROM conversations WHERE right(contact_wa_id, 4) NOT BETWEEN '0001' AND '0005' ORDER BY created_at LIMIT 1"
    )
    await Postgres.query(
      db.url,
      `INSERT INTO messages (account_id, id, conversation_id, lead_id, channel_id, direction, type, template, status,
         sender_type, sender_id, created_at, updated_at, priority, not_before)
       SELECT $1::uuid, 'msg_bench' || lpad(i::text, 20, '0'), $2, $3, $4, 'outbound', 'template',
         '{"name":"bench","language":"en_US","components":[]}'::jsonb, 'queued', 'user', 'bench', now(), now(), 0, now()
       FROM generate_series(1, $5::int) AS i`,
      [account.account_id, conversation!.id, conversation!.lead_id, channel.id, OUTBOUND]
    )
    await Postgres.query(db.url, "ANALYZE messages")
    const queued = async () =>
      Number(
        (await Postgres.query<{ n: string }>(db.url, "SELECT count(*) AS n FROM messages WHERE status = 'queued'"))[0]!
          .n
      )
    const sendStarted = Date.now()
    const worker = await Processes.worker(db.url, {
      WHATSAPP_APP_SECRET: SECRET,
      WHATSAPP_VERIFY_TOKEN: "bench",
      WHATSAPP_SEND_RATE: "0",
      WHATSAPP_SIMULATOR_DELAYS_MS: "0,0,0"
    })
    running.push(worker)
    let left = await queued()
    while (left > 0 && Date.now() - sendStarted < 600_000) {
      await new Promise((resolve) => setTimeout(resolve, 500))
      left = await queued()
    }
    const drained = (Date.now() - sendStarted) / 1000
    const outboundRate = (OUTBOUND - left) / drained
    // The statuses the simulator plays back are part of the work: the run ends when every message is read.
    const unread = async () =>
      Number(
        (
          await Postgres.query<{ n: string }>(
            db.url,
            "SELECT count(*) AS n FROM messages WHERE id LIKE 'msg_bench%' AND status NOT IN ('read', 'failed')"
          )
        )[0]!.n
      )
    while ((await unread()) > 0 && Date.now() - sendStarted < 600_000) {
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const settled = (Date.now() - sendStarted) / 1000
    const [states] = await Postgres.query<Record<string, string>>(
      db.url,
      `SELECT count(*) FILTER (WHERE status = 'read') AS read, count(*) FILTER (WHERE status = 'failed') AS failed
       FROM messages WHERE id LIKE 'msg_bench%'`
    )
    log(
      `outbound: ${OUTBOUND - left} of ${OUTBOUND} sent in ${drained.toFixed(1)} s: ${outboundRate.toFixed(0)}/s; all statuses in after ${settled.toFixed(1)} s: ${(OUTBOUND / settled).toFixed(0)}/s (read ${states!.read}, failed ${states!.failed})`
    )

    writeFileSync(
      join(here, "MESSAGING.md"),
      `# Messaging benchmarks (issue 11)

\`npm run bench:messaging\` on ${new Date().toISOString().slice(0, 10)}: ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores,
PostgreSQL; ${Processes.pinning}.

| what | result | target |
|---|---|---|
| inbound: signed batches of 10 to \`/webhooks/whatsapp\`, ${CONNECTIONS} connections, ${SECONDS} s | ${inboundRate.toFixed(0)} messages stored/s; acknowledgement p50 ${inbound.p50} ms, p99 ${inbound.p99} ms | ≥ 1,000/s, p99 ≤ 100 ms |
${
  previous === undefined
    ? ""
    : `| inbound, the same load on ${BEFORE_LABEL} (\`BENCH_BEFORE\`), in the same run | ${previous.rate.toFixed(0)} messages stored/s; acknowledgement p50 ${previous.inbound.p50} ms, p99 ${previous.inbound.p99} ms | |\n`
}| outbound: one \`leadline worker\` draining ${OUTBOUND} queued messages to the simulator (no rate limit; sent, delivered and read played back through the inbound route, in the worker) | sent: ${outboundRate.toFixed(0)} messages/s (${drained.toFixed(1)} s); every status in: ${(OUTBOUND / settled).toFixed(0)} messages/s (${settled.toFixed(1)} s; ${states!.read} read, ${states!.failed} failed) | ≥ 1,000/s |
`
    )
    log("wrote bench/MESSAGING.md")
  } finally {
    for (const process of running.reverse()) await process.stop()
    await db.drop()
  }
}

await main()

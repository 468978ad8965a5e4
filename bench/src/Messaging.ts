import { writeFileSync } from "node:fs"
import { cpus } from "node:os"
import { join } from "node:path"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"
import { post } from "./Http.ts"

/**
 * `npm run bench:messaging`: WhatsApp's two directions on PostgreSQL, for Leadline alone (no
 * baseline makes sense for WhatsApp's side).
 * - Inbound, in the two shapes Meta delivers: one message per signed webhook POST (what Meta
 *   usually sends) and batches of 10, from 2,000 customers (new leads first, repeat customers
 *   after), posted to /webhooks/whatsapp by BENCH_MESSAGING_CONNECTIONS (10) connections for
 *   BENCH_SECONDS (10) after a 3 s warm-up: messages stored per second (counted in the
 *   database) and the acknowledgement latency. Each round runs on a fresh server and database;
 *   BENCH_ROUNDS (2) rounds, medians reported.
 * - BENCH_BEFORE (the path of another checkout, installed) and BENCH_BEFORE_LABEL: the same
 *   inbound rounds on that version too, interleaved (before, after, after, before, …) so that
 *   neither gets the quieter minutes.
 * - BENCH_SHAPES ("1,10"): the messages per POST measured; BENCH_OUTBOUND=0 skips the outbound part.
 * - Outbound: BENCH_OUTBOUND (10,000) queued messages drained by one `leadline worker`
 *   sending to the simulator (no rate limit, statuses played at once through the inbound route).
 * Writes bench/MESSAGING.md.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const CONNECTIONS = Number(process.env.BENCH_MESSAGING_CONNECTIONS ?? 10)
const OUTBOUND = Number(process.env.BENCH_OUTBOUND ?? 10_000)
const CUSTOMERS = 2_000
const SHAPES = (process.env.BENCH_SHAPES ?? "1,10").split(",").map((part) => Number(part.trim()))
/** Another checkout of Leadline, installed: its inbound figures are measured in the same run. */
const BEFORE =
  process.env.BENCH_BEFORE === undefined || process.env.BENCH_BEFORE === "" ? undefined : process.env.BENCH_BEFORE
const BEFORE_LABEL = process.env.BENCH_BEFORE_LABEL ?? BEFORE ?? ""
const SECRET = "bench-app-secret"
const NUMBER = "100200300"
const here = join(import.meta.dirname, "..")
const log = (line: string) => console.log(`[bench:messaging] ${line}`)

let sequence = 0
const decoder = new TextDecoder()
/** One Meta webhook body with `size` text messages, as Meta serialises it; unique wamids. */
const batch = (size: number): string => {
  const timestamp = new Date()
  return decoder.decode(
    MetaPayloads.inboundTextsPayload(
      NUMBER,
      "16505551111",
      Array.from({ length: size }, () => {
        const n = sequence++
        return {
          from: `1415${String(2_000_000 + (n % CUSTOMERS)).padStart(7, "0")}`,
          name: `Customer ${n % CUSTOMERS}`,
          text: `Message ${n}`,
          externalId: `wamid.BENCH${n}`,
          timestamp
        }
      })
    )
  )
}

interface Figure {
  readonly rate: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
}

/** A server of `checkout` on `db`, an account with one WhatsApp channel. */
const serve = async (db: { readonly url: string }, running: Array<Processes.Running>, checkout?: string) => {
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
  const channel = await post(server.url, "/api/v1/channels", account.api_key as string, {
    type: "whatsapp",
    name: "Bench",
    phone_number_id: NUMBER,
    display_phone_number: "+16505551111",
    access_token: "bench"
  })
  return { server, account, channel }
}

const inboundLoad = (url: string, perPost: number, seconds: number) =>
  Load.run({
    url,
    path: "/webhooks/whatsapp",
    method: "POST",
    headers: { "content-type": "application/json" },
    next: () => {
      const body = batch(perPost)
      return { body, headers: { "x-hub-signature-256": MetaSignature.sign(SECRET, new TextEncoder().encode(body)) } }
    },
    connections: CONNECTIONS,
    seconds
  })

const inboundCount = async (url: string) =>
  Number(
    (await Postgres.query<{ n: string }>(url, "SELECT count(*) AS n FROM messages WHERE direction = 'inbound'"))[0]!.n
  )

/** One shape's figure on a running server: a warm-up, then the measured load, counted in the database. */
const measure = async (db: { readonly url: string }, url: string, perPost: number): Promise<Figure> => {
  await inboundLoad(url, perPost, 3)
  // Statistics, as autovacuum gathers them within a minute of such writes on a running
  // deployment: a fresh database has none, and its first plans are not the ones that last.
  await Postgres.query(db.url, "ANALYZE")
  const before = await inboundCount(db.url)
  const started = Date.now()
  const load = await inboundLoad(url, perPost, SECONDS)
  const stored = (await inboundCount(db.url)) - before
  return { rate: stored / ((Date.now() - started) / 1000), p50: load.p50, p99: load.p99, non2xx: load.non2xx }
}

/** One round of every shape for `checkout`, on a fresh server and database. */
const inboundRound = async (label: string, checkout?: string) => {
  const db = await Postgres.freshDatabase("messaging")
  const running: Array<Processes.Running> = []
  try {
    const { server } = await serve(db, running, checkout)
    const figures = new Map<number, Figure>()
    for (const perPost of SHAPES) {
      const figure = await measure(db, server.url, perPost)
      figures.set(perPost, figure)
      log(
        `inbound ${label}, ${perPost} per POST: ${figure.rate.toFixed(0)} messages/s; ack p50 ${figure.p50} ms, p99 ${figure.p99} ms, non-2xx ${figure.non2xx}`
      )
    }
    return figures
  } finally {
    for (const process of running.reverse()) await process.stop()
    await db.drop()
  }
}

const summary = (rounds: ReadonlyArray<ReadonlyMap<number, Figure>>, perPost: number): Figure => {
  const of = rounds.map((round) => round.get(perPost)!)
  return {
    rate: Load.median(of.map((f) => f.rate)),
    p50: Load.median(of.map((f) => f.p50)),
    p99: Load.median(of.map((f) => f.p99)),
    non2xx: of.reduce((sum, f) => sum + f.non2xx, 0)
  }
}

const row = (what: string, figure: Figure, target: string) =>
  `| ${what} | ${figure.rate.toFixed(0)} messages stored/s; ack p50 ${figure.p50} ms, p99 ${figure.p99} ms${figure.non2xx > 0 ? `; ${figure.non2xx} non-2xx` : ""} | ${target} |`

const main = async () => {
  Processes.pinSelf()
  const after: Array<ReadonlyMap<number, Figure>> = []
  const before: Array<ReadonlyMap<number, Figure>> = []
  for (let round = 0; round < ROUNDS; round++) {
    // before, after, after, before, …: neither version always gets the first or the later minutes.
    const order = BEFORE === undefined ? ["after"] : round % 2 === 0 ? ["before", "after"] : ["after", "before"]
    for (const which of order) {
      if (which === "after") after.push(await inboundRound("(this checkout)"))
      else before.push(await inboundRound(`(${BEFORE_LABEL})`, BEFORE))
    }
  }

  const db = await Postgres.freshDatabase("messaging")
  const running: Array<Processes.Running> = []
  try {
    const { server, account, channel } = await serve(db, running)
    // The customers' leads and conversations, for the queued messages to belong to.
    await inboundLoad(server.url, 10, 2)
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

    const rows = [
      ...SHAPES.map((perPost) =>
        row(
          `inbound: ${perPost === 1 ? "one message per signed POST (as Meta usually sends)" : `signed batches of ${perPost}`} to \`/webhooks/whatsapp\`, ${CONNECTIONS} connections, ${SECONDS} s, median of ${after.length} rounds`,
          summary(after, perPost),
          "≥ 1,000/s, p99 ≤ 100 ms"
        )
      ),
      ...(before.length === 0
        ? []
        : SHAPES.map((perPost) =>
            row(
              `the same, ${perPost} per POST, on ${BEFORE_LABEL} (\`BENCH_BEFORE\`), interleaved in the same run`,
              summary(before, perPost),
              ""
            )
          ))
    ]
    writeFileSync(
      join(here, "MESSAGING.md"),
      `# Messaging benchmarks

\`npm run bench:messaging\` on ${new Date().toISOString().slice(0, 10)}: ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores,
PostgreSQL; ${Processes.pinning}. Inbound messages are counted in the database, not by the
acknowledgements: an acknowledged message is stored when the answer leaves.

| what | result | target |
|---|---|---|
${rows.join("\n")}
| outbound: one \`leadline worker\` draining ${OUTBOUND} queued messages to the simulator (no rate limit; sent, delivered and read played back through the inbound route, in the worker) | sent: ${outboundRate.toFixed(0)} messages/s (${drained.toFixed(1)} s); every status in: ${(OUTBOUND / settled).toFixed(0)} messages/s (${settled.toFixed(1)} s; ${states!.read} read, ${states!.failed} failed) | ≥ 1,000/s |
`
    )
    log("wrote bench/MESSAGING.md")
  } finally {
    for (const process of running.reverse()) await process.stop()
    await db.drop()
  }
}

await main()

import { createWriteStream, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as TcpProxy from "@leadline/testkit/TcpProxy"
import * as TestDatabase from "@leadline/testkit/TestDatabase"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"
import { Api, expect, sleep } from "./soak/Api.ts"
import * as FailingReceiver from "./soak/FailingReceiver.ts"
import { Faults, GRAPH_DOWN_MS, PG_GRACE_MS, PG_OUTAGE_MS } from "./soak/Faults.ts"
import * as Graph from "./soak/Graph.ts"
import * as Invariants from "./soak/Invariants.ts"
import { Leads } from "./soak/Leads.ts"
import { Meta } from "./soak/Meta.ts"
import { Orders } from "./soak/Orders.ts"
import { Outbound } from "./soak/Outbound.ts"
import * as Shop from "./soak/Shop.ts"

/**
 * `npm run soak` (bench/SOAK.md): the platform soak. Two servers and two workers on one
 * PostgreSQL database, the WhatsApp Cloud API transport against a Graph of the soak's own
 * (soak/GraphServer.ts: 429s, 5xx, hangs, late and slow answers), and at once: Meta's signed
 * inbound batches with its duplicates and retries, and the statuses of every message Graph took;
 * API sends, two campaigns, the agent's replies and order notices going out; orders on one hot
 * product with tracked stock; the leads load with idempotent retries; a webhook receiver failing
 * 20%. Faults at spread-out times: a server and a worker killed with SIGKILL mid-flight,
 * PostgreSQL stopped for 5 s, Graph away for 10 s. Once the load has settled, the invariants
 * (soak/Invariants.ts) are checked and printed, held or broken, with their figures; the exit
 * code is 1 if any is broken.
 *
 * Loopback only; SOAK_SECONDS (300) of load. The database is a PostgreSQL cluster of the soak's
 * own (initdb in a temporary directory, on a free port), really stopped and started again, so the
 * machine's server and its other users are left alone. Without the PostgreSQL server binaries (or
 * with SOAK_OUTAGE=proxy) it runs on BENCH_DATABASE_URL's server and the outage is a cut of the
 * TCP proxy the processes reach it through instead.
 */

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300)
/** Scales every rate of the load (1: 8 inbound messages, 2 API sends and 3 orders a second, 3 leads clients aside). */
const RATE = Number(process.env.SOAK_RATE ?? 1)
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 3)
/** The sender's timeout: a "late" answer from Graph comes after twice this. */
const SEND_TIMEOUT_SECONDS = 3
/** The longest the soak waits for the load to settle after it stops. */
const SETTLE_MS = 240_000
const APP_SECRET = "soak-app-secret"

if (!Number.isFinite(SECONDS) || SECONDS < 30) throw new Error("SOAK_SECONDS must be 30 or more")

const log = (message: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}`)

const main = async (cluster: TestDatabase.Cluster | undefined) => {
  if (cluster !== undefined) process.env.BENCH_DATABASE_URL = cluster.url
  const database = await Postgres.freshDatabase("soak")
  const direct = new URL(database.url)
  const proxy = await TcpProxy.start({ host: direct.hostname, port: Number(direct.port || 5432) })
  const viaProxy = new URL(database.url)
  viaProxy.host = `127.0.0.1:${proxy.port}`
  const databaseUrl = viaProxy.toString()

  const graph = await Graph.start()
  const rates = Graph.ratesFrom(process.env.SOAK_GRAPH_FAULTS)
  graph.setFaults(rates, SEND_TIMEOUT_SECONDS * 2_000)
  const receiver = await FailingReceiver.start(0.2)
  const env = {
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_LEASE_SECONDS: "15",
    LEADLINE_RATE_LIMIT: "0",
    LOG_LEVEL: "info",
    WHATSAPP_TRANSPORT: "cloud",
    WHATSAPP_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: "soak-verify-token",
    WHATSAPP_API_BASE_URL: graph.url,
    WHATSAPP_SEND_TIMEOUT_SECONDS: String(SEND_TIMEOUT_SECONDS),
    WHATSAPP_SENDER_LEASE_SECONDS: "15",
    WHATSAPP_TEMPLATES_SYNC_SECONDS: "0"
  }
  // Every process's output, kept for a broken invariant's post-mortem (a 5xx names its request id).
  const logs = mkdtempSync(join(tmpdir(), "leadline-soak-logs-"))
  let launched = 0
  const keepLog = (name: string) => (running: Processes.Running) => {
    const file = createWriteStream(join(logs, `${name}-${++launched}.log`))
    running.process.stdout!.pipe(file)
    running.process.stderr!.pipe(file)
    return running
  }
  // Deliveries are the workers' alone, as in a deployment with `leadline worker`.
  const startServer = () =>
    Processes.leadline(databaseUrl, { ...env, WEBHOOK_WORKER_ENABLED: "false" }).then(keepLog("server"))
  const startWorker = () => Processes.worker(databaseUrl, env).then(keepLog("worker"))
  const api = new Api()
  api.add(await startServer())
  const [second, ...workers] = await Promise.all([startServer(), startWorker(), startWorker()])
  api.add(second!)

  const admin = Processes.ADMIN_TOKEN
  const leadsAccount = await expect(
    api.request("POST", "/admin/v1/accounts", { auth: admin, json: { name: "Soak leads" } }),
    201,
    "create the leads account"
  )
  const leadsEndpoint = await expect(
    api.request("POST", "/api/webhooks/endpoints", {
      auth: leadsAccount.api_key,
      json: { url: receiver.url, events: ["lead.created", "lead.deleted"] }
    }),
    201,
    "register the leads account's endpoint"
  )
  const shop = await Shop.setUp(api, {
    receiverUrl: receiver.url,
    initialStock: Math.round(4 * SECONDS * RATE),
    customers: 40,
    promoLeads: Math.max(100, Math.round(2 * SECONDS * RATE))
  })

  const started = Date.now()
  const giveUpAt = () => started + SECONDS * 1000 + 60_000
  const meta = new Meta({
    api,
    appSecret: APP_SECRET,
    phoneNumberId: Shop.PHONE_NUMBER_ID,
    displayPhoneNumber: Shop.DISPLAY_PHONE_NUMBER,
    sku: Shop.SKU,
    customers: shop.customers,
    perSecond: 8 * RATE
  })
  graph.onAttempts = (attempts) => meta.onGraph(attempts)
  const leads = new Leads(api, leadsAccount.api_key, giveUpAt)
  const outbound = new Outbound(api, shop, meta, giveUpAt)
  const orders = new Orders(api, shop, giveUpAt)
  const faults = new Faults({ api, workers, graph, cluster, proxy, startServer, startWorker, log })

  log(
    `running ${SECONDS} s: 2 servers, 2 workers, Graph answering ${Object.entries(rates)
      .map(([answer, rate]) => `${answer} ${(rate * 100).toFixed(0)}%`)
      .join(", ")}; webhook receiver failing 20%`
  )
  meta.start()
  leads.start(CLIENTS)
  outbound.start(2 * RATE)
  orders.start(3 * RATE)
  const at = (fraction: number) => sleep(Math.max(0, started + SECONDS * 1000 * fraction - Date.now()))
  const campaigns = (async () => {
    await at(0.1)
    log("queueing campaign 1")
    await outbound.campaign(1)
    await at(0.47)
    log("queueing campaign 2")
    await outbound.campaign(2)
  })()
  await at(0.2)
  await faults.killServer()
  await at(0.35)
  await faults.killWorker()
  await at(0.5)
  await faults.stopPostgres()
  await at(0.7)
  await faults.graphDown()
  await at(1)
  log("load stopped; waiting for it to settle")
  meta.stopMessages()
  await Promise.all([leads.stop(), outbound.stop(), orders.stop(), campaigns])

  const settled = await settle(database.url, shop, meta, graph, api)
  meta.close()
  await meta.stopped()
  log(`settled in ${(settled.millis / 1000).toFixed(0)} s${settled.done ? "" : " (gave up waiting)"}`)

  const verdicts = await Invariants.check({
    databaseUrl: database.url,
    api,
    shop,
    leadsAccount: { accountId: leadsAccount.account_id, key: leadsAccount.api_key, endpointId: leadsEndpoint.id },
    meta,
    attempts: graph.attempts,
    outbound,
    orders,
    leads,
    receiver,
    faults,
    postgresLog: cluster?.logFile
  })

  const clock = (time: number) => `${((time - started) / 1000).toFixed(1)} s`
  console.log("")
  console.log(
    `soak summary: ${SECONDS} s of load (SOAK_RATE ${RATE}), settled ${(settled.millis / 1000).toFixed(0)} s later`
  )
  console.log(
    `  database: ${cluster === undefined ? "the benchmarks' server through a TCP proxy" : "a PostgreSQL cluster of its own"}; Graph: ${graph.url} (its own process)`
  )
  for (const fault of faults.done) {
    console.log(
      `  fault at ${clock(fault.from)} to ${clock(fault.to)}: ${fault.name}${fault.detail.length === 0 ? "" : `; ${fault.detail.join("; ")}`}`
    )
  }
  console.log(
    `  failures forgiven: a killed server's requests in flight; everything from 1 s before PostgreSQL stopped (${PG_OUTAGE_MS / 1000} s) to ${PG_GRACE_MS / 1000} s after it was back; nothing for the worker or for Graph (${GRAPH_DOWN_MS / 1000} s away)`
  )
  if (settled.frozen !== undefined) console.log(`  ${settled.frozen}`)
  for (const verdict of verdicts) {
    console.log(`  ${verdict.held ? "held  " : "BROKEN"} ${verdict.name}`)
    for (const figure of verdict.figures) console.log(`           ${figure}`)
  }
  const broken = verdicts.filter((verdict) => !verdict.held).length
  console.log(`  ${verdicts.length - broken} held, ${broken} broken`)
  console.log(`  the servers' and workers' logs: ${logs}`)

  receiver.close()
  graph.close()
  for (const server of api.live()) await server.running.stop()
  for (const worker of workers) await worker.stop()
  await proxy.close()
  await database.drop()
  if (broken > 0) process.exitCode = 1
}

/**
 * Waits until nothing is left to do: no message queued, no delivery pending, no POST or status of
 * Meta's waiting, and no agent job due. A job held by the lease of a killed process (120 s) is not
 * waited for: the agent is disabled once only such jobs are left, so none answers after the checks.
 */
const settle = async (databaseUrl: string, shop: Shop.Shop, meta: Meta, graph: Graph.Graph, api: Api) => {
  const start = Date.now()
  const q = <A>(text: string) => Postgres.query<A>(databaseUrl, text)
  let frozen: string | undefined
  let quiet = 0
  let nextLog = start + 10_000
  while (Date.now() - start < SETTLE_MS) {
    await graph.flush()
    const [state] = await q<{ queued: number; pending: number; due: number; working: number; orphaned: number }>(
      `SELECT
         (SELECT count(*)::int FROM messages WHERE status = 'queued') AS queued,
         (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS pending,
         (SELECT count(*)::int FROM agent_jobs WHERE status = 'pending' AND (lease_until IS NULL OR lease_until <= now())) AS due,
         (SELECT count(*)::int FROM agent_jobs WHERE status = 'pending' AND lease_until > now() AND updated_at > now() - interval '10 seconds') AS working,
         (SELECT count(*)::int FROM agent_jobs WHERE status = 'pending' AND lease_until > now() AND updated_at <= now() - interval '10 seconds') AS orphaned`
    )
    if (frozen === undefined && state!.due === 0 && state!.working === 0) {
      const reply = await api.request("PATCH", `/api/v1/agents/${shop.agentId}`, {
        auth: shop.key,
        json: { enabled: false },
        route: "PATCH /api/v1/agents/{id}"
      })
      if (reply.status === 200) {
        frozen = `agent disabled after the load, with ${state!.orphaned} job(s) held by a killed process's lease`
      }
    }
    if (Date.now() >= nextLog) {
      nextLog += 10_000
      const left = meta.pending()
      log(
        `settling: ${state!.queued} messages queued, ${state!.pending} deliveries pending, ${state!.due + state!.working} agent jobs to do, Meta: ${left.posts} POSTs and ${left.statuses} statuses to go`
      )
    }
    if (frozen !== undefined && state!.queued === 0 && state!.pending === 0 && meta.idle()) {
      if (++quiet >= 2) return { done: true, millis: Date.now() - start, frozen }
    } else quiet = 0
    await sleep(1_000)
  }
  return { done: false, millis: Date.now() - start, frozen }
}

const cluster =
  process.env.SOAK_OUTAGE !== "proxy" && typeof TestDatabase.clusterSupport() !== "string"
    ? await TestDatabase.cluster()
    : undefined
try {
  await main(cluster)
} finally {
  await cluster?.destroy()
}
// Nothing of the run is left to wait for (a POST Meta would retry for days stops with the run).
process.exit()

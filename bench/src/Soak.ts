import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"
import type { Running } from "./Processes.ts"
import * as TcpProxy from "@leadline/testkit/TcpProxy"
import * as TestDatabase from "@leadline/testkit/TestDatabase"

/**
 * `npm run soak`: two servers and two workers on one PostgreSQL database, mixed
 * load with idempotent retries, a worker killed and restarted, the database
 * taken away once, a receiver failing 20% of attempts; then the invariants.
 * Loopback only; bounded by SOAK_SECONDS (300). The database is a PostgreSQL
 * cluster of the soak's own (initdb in a temporary directory, on a free port),
 * really stopped and started again, so the machine's server and its other users
 * are left alone. Without the PostgreSQL server binaries (or with
 * SOAK_OUTAGE=proxy) it runs on BENCH_DATABASE_URL's server and the outage is a
 * cut of the TCP proxy the processes reach it through instead.
 */

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300)
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 8)
const OUTAGE_SECONDS = 5

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const log = (message: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}`)

const startReceiver = async () => {
  const delivered = new Set<string>()
  let attempts = 0
  let failures = 0
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      attempts++
      if (Math.random() < 0.2) {
        failures++
        response.writeHead(500).end()
        return
      }
      delivered.add(JSON.parse(Buffer.concat(chunks).toString("utf8")).id)
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    delivered,
    stats: () => ({ attempts, failures }),
    close: () => {
      server.closeAllConnections()
      server.close()
    }
  }
}

const main = async (cluster: TestDatabase.Cluster | undefined) => {
  if (cluster !== undefined) process.env.BENCH_DATABASE_URL = cluster.url
  const database = await Postgres.freshDatabase()
  const direct = new URL(database.url)
  const proxy = await TcpProxy.start({ host: direct.hostname, port: Number(direct.port || 5432) })
  const viaProxy = new URL(database.url)
  viaProxy.host = `127.0.0.1:${proxy.port}`
  const env = {
    WEBHOOK_WORKER_ENABLED: "false",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_LEASE_SECONDS: "15",
    LEADLINE_RATE_LIMIT: "0",
    LOG_LEVEL: "info"
  }
  const receiver = await startReceiver()
  const servers = [
    await Processes.leadline(viaProxy.toString(), env),
    await Processes.leadline(viaProxy.toString(), env)
  ]
  const workers = [await Processes.worker(viaProxy.toString(), env), await Processes.worker(viaProxy.toString(), env)]
  const admin = { authorization: `Bearer ${Processes.ADMIN_TOKEN}`, "content-type": "application/json" }
  const account = (await (
    await fetch(`${servers[0]!.url}/admin/v1/accounts`, { method: "POST", headers: admin, body: '{"name":"Soak"}' })
  ).json()) as { api_key: string; account_id: string }
  const auth = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" }
  await fetch(`${servers[0]!.url}/api/webhooks/endpoints`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ url: receiver.url, events: ["lead.created", "lead.deleted"] })
  })

  const created = new Map<string, string>() // idempotency key -> lead id
  const deleted = new Set<string>()
  const fiveHundreds: Array<{ at: number; status: number; route: string }> = []
  const networkErrors: Array<number> = []
  const violations: Array<string> = []
  let requests = 0
  let replays = 0
  let outage: { from: number; to: number } | undefined
  let running = true
  let phone = 2_000_000

  const request = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    server = servers[requests % servers.length]!
  ) => {
    requests++
    try {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { ...auth, ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000)
      })
      const text = await response.text()
      if (response.status >= 500)
        fiveHundreds.push({ at: Date.now(), status: response.status, route: `${method} ${path}` })
      return {
        status: response.status,
        replayed: response.headers.get("idempotent-replayed") === "true",
        body: text === "" ? undefined : JSON.parse(text)
      }
    } catch {
      networkErrors.push(Date.now())
      return { status: 0, replayed: false, body: undefined }
    }
  }

  const recordCreate = (key: string, reply: { status: number; body: { id: string } }) => {
    const previous = created.get(key)
    if (previous !== undefined && previous !== reply.body.id) violations.push(`key ${key} made two leads`)
    created.set(key, reply.body.id)
  }

  const client = async (id: number) => {
    for (let i = 0; running; i++) {
      const key = `soak-${id}-${i}`
      const body = { name: `Soak ${id}.${i}`, phone: `+1415${phone++}` }
      const send = (server?: Running) => request("POST", "/api/v1/leads", body, { "idempotency-key": key }, server)
      // Every tenth create goes to both servers at once: one of the twins must replay or wait, never run.
      if (i % 10 === 0) {
        for (const reply of await Promise.all([send(servers[0]), send(servers[1])])) {
          if (reply.status === 201) recordCreate(key, reply)
        }
      }
      // Retry with the same key until the create is answered (past the end of the run too, for a
      // minute at most): a committed lead must have its 201, and the key must run once at most.
      for (const giveUp = Date.now() + SECONDS * 1000 + 60_000; !created.has(key) && Date.now() < giveUp; ) {
        const reply = await send()
        if (reply.status === 201) recordCreate(key, reply)
        else if (reply.status === 409 && reply.body?.code === "conflict") {
          // Its phone is taken: only a second execution of this key could have taken it.
          violations.push(`key ${key} executed twice`)
          break
        } else if (reply.status !== 0 && reply.status < 500 && reply.status !== 409) {
          violations.push(`unexpected ${reply.status} ${JSON.stringify(reply.body)}`)
          break
        } else await sleep(200)
      }
      // And every seventh is replayed once answered: the same lead, marked as a replay.
      if (i % 7 === 3 && created.has(key)) {
        const again = await send()
        if (again.status === 201) {
          replays++
          if (!again.replayed || again.body.id !== created.get(key))
            violations.push(`replay of ${key} was not the original`)
        }
      }
      await request("GET", "/api/v1/leads?limit=20")
      if (i % 5 === 4) {
        const victim = created.get(`soak-${id}-${i - 2}`)
        if (victim !== undefined) {
          const reply = await request("DELETE", `/api/v1/leads/${victim}`)
          if (reply.status === 200) deleted.add(victim)
        }
      }
    }
  }

  const started = Date.now()
  log(`running ${SECONDS} s: ${CLIENTS} clients, 2 servers, 2 workers, receiver failing 20%`)
  const load = Array.from({ length: CLIENTS }, (_, id) => client(id))
  const at = (fraction: number) => sleep(Math.max(0, started + SECONDS * 1000 * fraction - Date.now()))

  await at(1 / 3)
  log("killing worker 1 (SIGKILL)")
  workers[0]!.process.kill("SIGKILL")
  await sleep(3000)
  workers[0] = await Processes.worker(viaProxy.toString(), env)
  log("worker 1 restarted")

  await at(1 / 2)
  const from = Date.now()
  if (cluster !== undefined) {
    log(`stopping PostgreSQL (pg_ctl stop -m fast) for ${OUTAGE_SECONDS} s`)
    await cluster.stop()
    await sleep(OUTAGE_SECONDS * 1000)
    await cluster.start()
  } else {
    log(`PostgreSQL away for ${OUTAGE_SECONDS} s (proxy cut)`)
    await proxy.cut()
    await sleep(OUTAGE_SECONDS * 1000)
    await proxy.restore()
  }
  outage = { from, to: Date.now() }
  log("PostgreSQL back")

  await at(1)
  running = false
  await Promise.all(load)
  log("load stopped; waiting for deliveries to settle")
  const pendingCount = async () =>
    Number(
      (
        await Postgres.query<{ n: number }>(
          database.url,
          "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'"
        )
      )[0]!.n
    )
  for (let waited = 0; (await pendingCount()) > 0 && waited < 120_000; waited += 1000) await sleep(1000)

  const q = <A>(text: string) => Postgres.query<A>(database.url, text)
  const leadsInDb = new Set((await q<{ id: string }>("SELECT id FROM leads")).map((row) => row.id))
  const createdIds = new Set(created.values())
  const expected = new Set([...createdIds].filter((id) => !deleted.has(id)))
  const createdEvents = await q<{ lead: string; n: number }>(
    "SELECT payload->'data'->>'id' AS lead, count(*)::int AS n FROM events WHERE type = 'lead.created' GROUP BY 1"
  )
  const deliveries = await q<{ status: string; event_id: string }>("SELECT status, event_id FROM webhook_deliveries")
  const undelivered = deliveries.filter(
    (d) => d.status === "pending" || (d.status === "delivered" && !receiver.delivered.has(d.event_id))
  )
  const failed = deliveries.filter((d) => d.status === "failed").length
  const grace = 15_000
  const outsideOutage = (at: number) => outage === undefined || at < outage.from - 1000 || at > outage.to + grace
  const stray5xx = fiveHundreds.filter((e) => outsideOutage(e.at))
  const strayNetworkErrors = networkErrors.filter(outsideOutage)
  const [withoutDelivery] = await q<{ n: number }>(
    "SELECT count(*)::int AS n FROM events e WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)"
  )
  // Every key that got a 201 has its stored response, naming the lead the client saw.
  const stored = await q<{ key: string; id: string }>(
    "SELECT key, body::jsonb->>'id' AS id FROM idempotency_keys WHERE status = 201"
  )
  const storedMismatch = stored.filter((row) => created.has(row.key) && created.get(row.key) !== row.id).length

  const checks = [
    [
      "leads in the database = distinct 201s seen (minus deletes)",
      leadsInDb.size === expected.size && [...expected].every((id) => leadsInDb.has(id))
    ],
    [
      "one lead.created event per lead",
      createdEvents.length === createdIds.size && createdEvents.every((e) => e.n === 1 && createdIds.has(e.lead))
    ],
    ["every event delivered at least once or marked failed", undelivered.length === 0 && withoutDelivery!.n === 0],
    [
      "no idempotency key executed twice",
      violations.length === 0 && storedMismatch === 0 && createdEvents.length === createdIds.size
    ],
    [
      "no 5xx and no dropped connection outside the database outage",
      stray5xx.length === 0 && strayNetworkErrors.length === 0
    ]
  ] as const

  console.log("")
  console.log(`soak summary (${SECONDS} s, ${CLIENTS} clients)`)
  console.log(
    `  database outage: ${cluster === undefined ? "TCP proxy cut" : "PostgreSQL stopped (pg_ctl stop -m fast) and started"}, ${OUTAGE_SECONDS} s`
  )
  console.log(
    `  requests: ${requests}, replays checked: ${replays}, network errors: ${networkErrors.length} (${strayNetworkErrors.length} outside the outage), 5xx: ${fiveHundreds.length} (${stray5xx.length} outside the outage)`
  )
  for (const violation of violations.slice(0, 10)) console.log(`  violation: ${violation}`)
  console.log(`  leads created: ${createdIds.size}, deleted: ${deleted.size}, in database: ${leadsInDb.size}`)
  console.log(
    `  deliveries: ${deliveries.length} (${failed} failed after 4 attempts), receiver attempts: ${receiver.stats().attempts}, refused with 500: ${receiver.stats().failures}`
  )
  for (const [name, ok] of checks) console.log(`  ${ok ? "ok  " : "FAIL"} ${name}`)

  receiver.close()
  for (const process of [...servers, ...workers]) await process.stop()
  await proxy.close()
  await database.drop()
  if (checks.some(([, ok]) => !ok)) process.exitCode = 1
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

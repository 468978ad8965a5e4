import { writeFileSync } from "node:fs"
import { cpus, loadavg, totalmem } from "node:os"
import { join } from "node:path"
import * as BaselineSeed from "../baseline/Seed.ts"
import * as Checkout from "./Checkout.ts"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"
import {
  commitCost,
  describeSamples,
  measure,
  type Run,
  SAMPLE_MS,
  sampleBackends,
  summarize,
  walStats
} from "./OrdersDiagnostics.ts"

/**
 * `npm run bench:orders`: issue 13's figure on PostgreSQL. `POST /api/v1/orders` with two lines
 * (one product, one custom line) in one account, every order for the same product, against
 * the hand-written baseline's `POST /api/v1/leads` (one account, loaded as `npm run bench`
 * loads it), at each connection count, the servers alternating round by round:
 * - "hot": the product's stock is tracked (100,000,000 units), so every order takes a unit
 *   from its connection's stripe of the product's stock (16 rows), asking when a stripe runs dry;
 * - "untracked": the same order for a product without stock (`stock` null): no lock, no write;
 * - the baseline's lead create, the comparison point: the target is hot ≥ 0.8× its rate (issue 31; issue 13's floor was 0.5).
 * Then, outside the measured rounds: what one commit costs on this PostgreSQL (serial,
 * unloaded), and samples of pg_stat_activity while each variant runs (who waits on a lock, and
 * what the holder is doing): what bounds the hot product's rate.
 * Settings, as `npm run bench`: BENCH_SECONDS (per measured run, 5), BENCH_ROUNDS (3),
 * BENCH_CONNECTIONS ("10,50"), BENCH_WARMUP_SECONDS (2). Writes bench/ORDERS.md.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? "10,50").split(",").map((part) => {
  const n = Number(part.trim())
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_CONNECTIONS: "${part}" is not a connection count`)
  return n
})
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
/** The baseline's account holds as many leads as `npm run bench` seeds in it. */
const BASELINE_LEADS = 1_000
const STOCK = 100_000_000
const TARGET = 0.8
const here = join(import.meta.dirname, "..")
const log = (line: string) => console.log(`[bench:orders ${new Date().toISOString().slice(11, 19)}] ${line}`)

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

// Valid, distinct US numbers for the baseline's creates (as `npm run bench` makes them).
let phoneCounter = 2_000_000
const nextPhone = () => `+1415${phoneCounter++}`
let keyCounter = 0
const nextKey = () => `bench-orders-${process.pid}-${keyCounter++}`

const VARIANTS = ["hot", "untracked", "baseline"] as const
type Variant = (typeof VARIANTS)[number]
const LABELS: Record<Variant, string> = {
  hot: "Leadline orders, tracked product (hot product)",
  untracked: "Leadline orders, untracked product",
  baseline: "baseline `POST /api/v1/leads`"
}

interface Target {
  readonly url: string
  readonly key: string
  /** The order's body (Leadline), or undefined for the baseline's lead create. */
  readonly order?: string
}

const load = (target: Target, connections: number, seconds: number): Load.LoadOptions => {
  const headers = { authorization: `Bearer ${target.key}`, "content-type": "application/json" }
  const order = target.order
  return order === undefined
    ? {
        url: target.url,
        path: "/api/v1/leads",
        method: "POST",
        headers,
        next: () => ({
          body: JSON.stringify({ name: "Bench lead", phone: nextPhone() }),
          headers: { "idempotency-key": nextKey() }
        }),
        connections,
        seconds
      }
    : {
        url: target.url,
        path: "/api/v1/orders",
        method: "POST",
        headers,
        next: () => ({ body: order, headers: { "idempotency-key": nextKey() } }),
        connections,
        seconds
      }
}

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a")
const percent = (value: number) => (Number.isFinite(value) ? `${(value * 100).toFixed(0)}%` : "n/a")

const main = async () => {
  const leadlineDb = await Postgres.freshDatabase("orders")
  const baselineDb = await Postgres.freshDatabase("orders_baseline")
  const databases = [leadlineDb, baselineDb]
  const running: Array<Processes.Running> = []
  try {
    Processes.pinSelf()
    const code = Checkout.describe()
    const load1 = loadavg()[0]!
    log(
      `load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(", ")} before the run`
    )

    // Leadline: one account, one lead, two products (one tracked, one not).
    const leadline = await Processes.leadline(leadlineDb.url)
    running.push(leadline)
    const account = expect(
      "account",
      await call(leadline.url, "POST", "/admin/v1/accounts", Processes.ADMIN_TOKEN, { name: "Orders" }),
      201
    )
    const key = account.api_key as string
    const lead = expect(
      "lead",
      await call(leadline.url, "POST", "/api/v1/leads", key, { name: "Buyer", phone: "+14155550100" }),
      201
    )
    const product = async (sku: string, stock: number | null) =>
      expect(
        `product ${sku}`,
        await call(leadline.url, "POST", "/api/v1/catalogue/products", key, {
          sku,
          name: `Product ${sku}`,
          unit_amount: 1290,
          currency: "BRL",
          stock
        }),
        201
      )
    const hot = await product("HOT-1", STOCK)
    const untracked = await product("FREE-1", null)
    if (hot.stock !== STOCK || untracked.stock !== null) {
      throw new Error(`products made with stock ${hot.stock} and ${untracked.stock}`)
    }
    const orderBody = (productId: string) =>
      JSON.stringify({
        lead_id: lead.id,
        items: [
          { product_id: productId, quantity: 1 },
          { name: "Gift wrap", unit_amount: 300, quantity: 1 }
        ]
      })
    // One order of each by hand first: 201, priced by the server, the stock taken from the tracked one only.
    for (const [name, p] of [
      ["hot", hot],
      ["untracked", untracked]
    ] as const) {
      const response = await fetch(`${leadline.url}/api/v1/orders`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": nextKey() },
        body: orderBody(p.id)
      })
      const order = expect(`order (${name})`, { status: response.status, body: await response.json() }, 201)
      if (order.amount_total !== 1590 || order.currency !== "BRL" || order.items.length !== 2) {
        throw new Error(`order (${name}) priced ${JSON.stringify(order)}`)
      }
    }
    const stockOf = async (id: string) =>
      expect("product", await call(leadline.url, "GET", `/api/v1/catalogue/products/${id}`, key), 200).stock
    if ((await stockOf(hot.id)) !== STOCK - 1 || (await stockOf(untracked.id)) !== null) {
      throw new Error("the first orders did not take stock as expected")
    }

    // The baseline, on a database of its own, seeded as `npm run bench` seeds it.
    const baseline = await Processes.baseline(baselineDb.url)
    running.push(baseline)
    const baselineAccount = await BaselineSeed.createAccount(baselineDb.url, "Bench")
    await BaselineSeed.seedLeads(baselineDb.url, baselineAccount.accountId, BASELINE_LEADS)
    const targets: Record<Variant, Target> = {
      hot: { url: leadline.url, key, order: orderBody(hot.id) },
      untracked: { url: leadline.url, key, order: orderBody(untracked.id) },
      baseline: { url: baseline.url, key: baselineAccount.apiKey }
    }
    const servers: Record<Variant, Processes.Running> = { hot: leadline, untracked: leadline, baseline }
    log(`Leadline on ${leadlineDb.name}, baseline on ${baselineDb.name}`)

    // Measured rounds: the three loads alternate, each round starting with the next one.
    const results: Array<{ connections: number; runs: Record<Variant, Array<Run>>; warmupFailed: number }> = []
    for (const connections of CONNECTIONS) {
      const runs: Record<Variant, Array<Run>> = { hot: [], untracked: [], baseline: [] }
      let warmupFailed = 0
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < VARIANTS.length; i++) {
          const variant = VARIANTS[(i + round) % VARIANTS.length]!
          const warm = await Load.run(load(targets[variant], connections, WARMUP_SECONDS))
          warmupFailed += warm.non2xx + warm.errors
          const result = await measure(servers[variant], load(targets[variant], connections, SECONDS))
          runs[variant].push(result)
          log(
            `${connections} connections, round ${round + 1}, ${variant}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}, server CPU ${percent(result.serverCpu)}, machine ${percent(result.machineCpu)}`
          )
        }
      }
      results.push({ connections, runs, warmupFailed })
    }

    const orderCount = async () =>
      Number((await Postgres.query<{ n: string }>(leadlineDb.url, "SELECT count(*) AS n FROM orders"))[0]!.n)
    // Outside the rounds: a commit's cost unloaded, then each Leadline variant once more with its backends sampled.
    const cost = await commitCost(leadlineDb.url)
    log(
      `unloaded, serial: SELECT 1 p50 ${fixed(cost.readP50, 2)} ms; one-row INSERT committed p50 ${fixed(cost.commitP50, 2)} ms, p99 ${fixed(cost.commitP99, 2)} ms`
    )
    const diagnostics: Array<{
      connections: number
      variant: "hot" | "untracked"
      load: Load.LoadResult
      backends: ReturnType<typeof describeSamples>
      /** WAL flushes and bytes per order during the sampled run (the baseline idle meanwhile). */
      wal: { syncs: number; bytes: number }
    }> = []
    for (const connections of CONNECTIONS) {
      for (const variant of ["hot", "untracked"] as const) {
        await Load.run(load(targets[variant], connections, WARMUP_SECONDS))
        const walBefore = await walStats(leadlineDb.url)
        const ordersBefore = await orderCount()
        const sampled = await sampleBackends(leadlineDb.url, () =>
          Load.run(load(targets[variant], connections, SECONDS))
        )
        const walAfter = await walStats(leadlineDb.url)
        const orders = (await orderCount()) - ordersBefore
        const wal = {
          syncs: (walAfter.syncs - walBefore.syncs) / orders,
          bytes: (walAfter.bytes - walBefore.bytes) / orders
        }
        const backends = describeSamples(sampled.samples)
        diagnostics.push({ connections, variant, load: sampled.result, backends, wal })
        log(
          `sampled, ${connections} connections, ${variant}: ${JSON.stringify({ load: sampled.result, backends, wal })}`
        )
      }
    }

    // Every order of the tracked product took one unit, and the untracked one none.
    const [counts] = await Postgres.query<{ hot: string; untracked: string }>(
      leadlineDb.url,
      `SELECT count(*) FILTER (WHERE items @> $1::jsonb) AS hot, count(*) FILTER (WHERE items @> $2::jsonb) AS untracked
       FROM orders`,
      [JSON.stringify([{ product_id: hot.id }]), JSON.stringify([{ product_id: untracked.id }])]
    )
    const hotOrders = Number(counts!.hot)
    const untrackedOrders = Number(counts!.untracked)
    const hotStock = await stockOf(hot.id)
    const stockKept = hotStock === STOCK - hotOrders && (await stockOf(untracked.id)) === null
    log(
      `orders placed: ${hotOrders} of the tracked product (stock now ${hotStock}: ${stockKept ? "one unit each" : "**out of step**"}), ${untrackedOrders} of the untracked one`
    )

    await baseline.stop()
    await leadline.stop()
    running.length = 0

    const rows = results.map(({ connections, runs, warmupFailed }) => {
      const perRound = (a: Variant, b: Variant) =>
        Load.median(runs[a].map((r, i) => r.requestsPerSecond / runs[b][i]!.requestsPerSecond))
      const s = { hot: summarize(runs.hot), untracked: summarize(runs.untracked), baseline: summarize(runs.baseline) }
      return {
        connections,
        runs,
        summary: s,
        warmupFailed,
        hotRatio: perRound("hot", "baseline"),
        untrackedRatio: perRound("untracked", "baseline"),
        hotOverUntracked: perRound("hot", "untracked"),
        hotP99Ratio: s.hot.p99 / s.baseline.p99,
        untrackedP99Ratio: s.untracked.p99 / s.baseline.p99
      }
    })
    const failed = rows.reduce(
      (sum, r) => sum + r.warmupFailed + r.summary.hot.failed + r.summary.untracked.failed + r.summary.baseline.failed,
      0
    )
    const diagnostic = (connections: number, variant: "hot" | "untracked") =>
      diagnostics.find((d) => d.connections === connections && d.variant === variant)!

    const lines: Array<string> = []
    lines.push(
      "# Orders benchmark (issue 13)",
      "",
      `\`npm run bench:orders\` on ${new Date().toISOString().slice(0, 10)} (${code}): ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB,`,
      `Node ${process.version}, PostgreSQL ${await Postgres.version(baselineDb.url)} (fsync and synchronous_commit on); ${Processes.pinning}.`,
      `${ROUNDS} rounds of ${SECONDS} s after ${WARMUP_SECONDS} s of warm-up at each connection count, the three loads alternating (each round starts with the next); load average ${fixed(load1, 2)} at the start.`,
      "The machine's cores are shared and noisy: compare ratios measured in the same run.",
      "",
      "Leadline, on a fresh database: one account (its owner's full-access key), one lead, and two products at 1290 BRL,",
      `\`HOT-1\` with \`stock: ${STOCK}\` (tracked: every order takes a unit from its connection's stripe of the stock) and \`FREE-1\` with \`stock: null\``,
      "(untracked: no lock, no write). Every request is `POST /api/v1/orders` with a new `Idempotency-Key` and the body",
      "",
      "```json",
      `{"lead_id": "<the lead>", "items": [{"product_id": "<HOT-1 or FREE-1>", "quantity": 1}, {"name": "Gift wrap", "unit_amount": 300, "quantity": 1}]}`,
      "```",
      "",
      "so every order of a run is for the same product, in the same account. The baseline ([`baseline/`](baseline/README.md)),",
      `on a database of its own with one account of ${BASELINE_LEADS.toLocaleString("en-US")} leads, is loaded as \`npm run bench\` loads its lead create: \`POST /api/v1/leads\`,`,
      "one key, a new phone and a new `Idempotency-Key` per request. It has no orders route; its lead create is the comparison point",
      `(a transaction of an idempotency record, a row, an event), and the target is orders for the tracked product ≥ ${TARGET}× its rate (issue 31).`,
      "",
      "Medians over the rounds; ratio: the median of the per-round ratios; p99 ratio: Leadline's median p99 over the baseline's.",
      "Server CPU: the loaded server process's CPU time over the run's wall time (100% is its one core); machine CPU: the",
      "share of both cores busy meanwhile (PostgreSQL and the load generator included), from /proc.",
      ""
    )
    lines.push(
      "| connections | load | req/s | p50 ms | p99 ms | ratio to the baseline | p99 ratio | server CPU | machine CPU | non-2xx and errors |",
      "|---|---|---|---|---|---|---|---|---|---|"
    )
    const cpu = (summary: ReturnType<typeof summarize>) =>
      `${percent(summary.serverCpu)} | ${percent(summary.machineCpu)} | ${summary.failed}`
    for (const r of rows) {
      lines.push(
        `| ${r.connections} | ${LABELS.hot} | ${fixed(r.summary.hot.requestsPerSecond, 0)} | ${fixed(r.summary.hot.p50)} | ${fixed(r.summary.hot.p99)} | ${fixed(r.hotRatio, 2)} (target ${TARGET}: ${r.hotRatio >= TARGET ? "met" : "**missed**"}) | ${fixed(r.hotP99Ratio, 2)} | ${cpu(r.summary.hot)} |`,
        `| ${r.connections} | ${LABELS.untracked} | ${fixed(r.summary.untracked.requestsPerSecond, 0)} | ${fixed(r.summary.untracked.p50)} | ${fixed(r.summary.untracked.p99)} | ${fixed(r.untrackedRatio, 2)} | ${fixed(r.untrackedP99Ratio, 2)} | ${cpu(r.summary.untracked)} |`,
        `| ${r.connections} | ${LABELS.baseline} | ${fixed(r.summary.baseline.requestsPerSecond, 0)} | ${fixed(r.summary.baseline.p50)} | ${fixed(r.summary.baseline.p99)} | | | ${cpu(r.summary.baseline)} |`
      )
    }
    lines.push(
      "",
      failed === 0
        ? "Every request of every run, warm-ups included, was answered 2xx (the orders 201)."
        : `**${failed} non-2xx answers or errors during the load, warm-ups included: these runs measure more than the route.**`,
      `After the run, ${hotOrders.toLocaleString("en-US")} orders named \`HOT-1\` and its stock was ${hotStock.toLocaleString("en-US")}: ${stockKept ? "one unit taken per order, none lost or oversold" : "**out of step with its orders**"}; ${untrackedOrders.toLocaleString("en-US")} named \`FREE-1\`, whose stock stayed null.`,
      "",
      "Requests per second, round by round (hot / untracked / baseline):",
      "",
      `| connections | ${Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}`).join(" | ")} |`,
      `|---|${Array.from({ length: ROUNDS }, () => "---|").join("")}`
    )
    for (const r of rows) {
      const cells = r.runs.hot.map((_, i) =>
        (["hot", "untracked", "baseline"] as const).map((v) => fixed(r.runs[v][i]!.requestsPerSecond, 0)).join(" / ")
      )
      lines.push(`| ${r.connections} | ${cells.join(" | ")} |`)
    }

    lines.push(
      "",
      "### What bounds it",
      "",
      `At ${rows.map((r) => r.connections).join(" and ")} connections, orders for the tracked product ran at ${rows.map((r) => `${fixed(r.hotRatio, 2)}×`).join(" and ")} the baseline's lead creates (target ${TARGET}: ${rows.every((r) => r.hotRatio >= TARGET) ? "met" : rows.some((r) => r.hotRatio >= TARGET) ? "**missed** at some" : "**missed**"}); for the untracked product, the same order without a stock to take, at ${rows.map((r) => `${fixed(r.untrackedRatio, 2)}×`).join(" and ")}.`,
      "",
      'An order is one unit of work (docs/performance.md, "One statement per create"): it reads the lead and the products',
      "(plain reads, outside a transaction), then commits everything else as one statement: the order, `order.created` and",
      "its deliveries (none here), the `Idempotency-Key`'s record, and, last, the stock: an `UPDATE` of the product's stripe",
      "for this connection (the stock is spread over 16 rows, `pg_backend_pid() % 16`), presumed sufficient (a dry stripe",
      "breaks `stock >= 0`, and the unit runs again asking: every stripe locked in order, summed, and what is left spread",
      'again; docs/performance.md, "One hot product"). Orders for the product wait on each other only when their connections',
      "share a stripe, and the stripe's lock is released before the commit's flush (\"A hot row's lock and the commit's",
      'flush"). The untracked product runs the same statements, but its `UPDATE` matches no stripe, so it locks and writes',
      "nothing, and it commits as any other write does, waiting for its own flush: the two Leadline loads differ by that",
      "write, its stripe's lock and how the flush is waited for.",
      "",
      `- The hot row's cost, in the same run: hot / untracked ${rows.map((r) => `${fixed(r.hotOverUntracked, 2)} at ${r.connections} connections`).join(", ")} (median of the per-round ratios).`,
      `- One order per product at a time: ${rows.map((r) => `${fixed(r.summary.hot.requestsPerSecond, 0)} orders/s at ${r.connections} connections is one every ${fixed(1000 / r.summary.hot.requestsPerSecond, 2)} ms`).join("; ")}: ${rows.every((r) => diagnostic(r.connections, "hot").backends.withWaiters >= 0.9) ? "the time each order held the row, since an order was waiting for it in nearly every sample (below)" : "an upper bound on the time each order held the row (it was not always waited for: below)"}.`,
      `- A commit's flush: a one-row \`INSERT\` committed, serial on an unloaded connection, takes ${fixed(cost.commitP50, 2)} ms at p50 (${fixed(cost.commitP99, 2)} ms p99; \`SELECT 1\` ${fixed(cost.readP50, 2)} ms). Under load a flush takes longer, and it is outside the hot row's lock: ${diagnostics.map((d) => `${fixed(d.wal.syncs, 2)} WAL flushes per ${d.variant} order at ${d.connections} connections`).join(", ")} (pg_stat_wal, during the sampled runs below; an order writes ${fixed(diagnostic(CONNECTIONS[0]!, "hot").wal.bytes / 1024, 1)} KiB of WAL).`,
      `- ${rows.every((r) => r.summary.hot.serverCpu < 0.8) ? "Nor is it the server's CPU" : "The server's CPU"}: ${rows.map((r) => `at ${r.connections} connections the server process used ${percent(r.summary.hot.serverCpu)} of its core on the hot product, ${percent(r.summary.untracked.serverCpu)} on the untracked one`).join("; ")} (the machine's two cores ${rows.map((r) => `${percent(r.summary.hot.machineCpu)} busy on the hot product at ${r.connections}`).join(", ")}).`
    )
    lines.push(
      "",
      `Backends sampled every ${SAMPLE_MS} ms during one more ${SECONDS} s run of each Leadline load, after the rounds (Leadline's pool holds 10`,
      "connections). Waiting: backends waiting on a lock. In a transaction: backends not idle. The holder is the backend the",
      "waiters queue behind; it is running a statement, writing or flushing WAL (its commit), or between two statements",
      "(idle in transaction: its next statement has not arrived from the server process yet).",
      "",
      "| connections | load | req/s | samples with a waiter | mean waiting | mean in a transaction | holder: running a statement | writing or flushing WAL | between statements |",
      "|---|---|---|---|---|---|---|---|---|"
    )
    for (const d of diagnostics) {
      const b = d.backends
      lines.push(
        `| ${d.connections} | ${d.variant} | ${fixed(d.load.requestsPerSecond, 0)} | ${percent(b.withWaiters)} of ${b.samples} | ${fixed(b.meanWaiting, 2)} | ${fixed(b.meanInTransaction, 2)} | ${b.withWaiters === 0 ? "" : percent(b.holderKinds["running a statement"])} | ${b.withWaiters === 0 ? "" : percent(b.holderKinds["writing or flushing WAL"])} | ${b.withWaiters === 0 ? "" : percent(b.holderKinds["between statements"])} |`
      )
    }
    const hotFirst = diagnostic(CONNECTIONS[0]!, "hot").backends
    const hotLast = diagnostic(CONNECTIONS.at(-1)!, "hot").backends
    const first = rows[0]!
    const last = rows.at(-1)!
    const both = (f: (d: ReturnType<typeof describeSamples>) => string) =>
      `${f(hotFirst)}${CONNECTIONS.length > 1 ? ` and ${f(hotLast)}` : ""}`
    const serverBound = diagnostics.every(
      (d) => d.variant === "untracked" || d.backends.holderKinds["between statements"] >= 0.5
    )
    const closing = [
      `On the hot product a backend waited on the row in ${both((b) => percent(b.withWaiters))} of the samples${CONNECTIONS.length > 1 ? ` at ${CONNECTIONS[0]} and ${CONNECTIONS.at(-1)} connections` : ""},`,
      `${both((b) => fixed(b.meanWaiting, 1))} of the pool's backends on average; on the untracked product none did.`,
      `The backend they queued behind was between statements in ${both((b) => percent(b.holderKinds["between statements"]))} of those samples,`,
      `running a statement in ${both((b) => percent(b.holderKinds["running a statement"]))}, writing or flushing WAL in ${both((b) => percent(b.holderKinds["writing or flushing WAL"]))}.`,
      serverBound
        ? "Holding the lock, it mostly waits for its next statement: PostgreSQL's answer goes to the server process, which does this order's work up to its next statement (building the event and the response among it) in turn with every other request in flight, and sends it. So the rate for one product is bound by the round trips between the stock's lock and the commit, each as long as the server's event loop makes it, more than by PostgreSQL's work or the flush."
        : hotFirst.holderKinds["writing or flushing WAL"] >= 0.5
          ? "The holder's time goes mostly to flushing the WAL: the commit's flush, under the lock, bounds the rate for one product."
          : "The holder was running its statement, not flushing: the flush is out of the lock, and the statement under it is what one product's orders queue for.",
      ...(CONNECTIONS.length > 1
        ? [
            `From ${first.connections} to ${last.connections} connections the hot rate went from ${fixed(first.summary.hot.requestsPerSecond, 0)} to ${fixed(last.summary.hot.requestsPerSecond, 0)} orders/s and its p50 from ${fixed(first.summary.hot.p50, 0)} to ${fixed(last.summary.hot.p50, 0)} ms:`,
            "the pool caps the backends at 10, and the other connections wait in the server for a backend that then queues on the row."
          ]
        : []),
      `What is left between the two Leadline loads (hot / untracked ${rows.map((r) => fixed(r.hotOverUntracked, 2)).join(" and ")}): the orders that queue on the row (a backend waiting in ${both((b) => percent(b.withWaiters))} of the samples), the stock's write, and the wait for a flush round (the order that runs a round runs it on its own connection, and the orders that only wait give theirs back).`,
      "Orders for different products lock different rows and do not queue on each other (by design; one product is the worst case, and the one measured here)."
    ]
    lines.push("", closing.join(" "), "")
    lines.push(
      "Run it from the repository's root with `npm run bench:orders -w @leadline/bench` (PostgreSQL at BENCH_DATABASE_URL, else",
      "TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres; fresh databases are made and dropped). Settings:",
      `BENCH_SECONDS (${SECONDS}), BENCH_ROUNDS (${ROUNDS}), BENCH_CONNECTIONS (${CONNECTIONS.join(",")}), BENCH_WARMUP_SECONDS (${WARMUP_SECONDS}), as \`npm run bench\`.`,
      ""
    )
    writeFileSync(join(here, "ORDERS.md"), lines.join("\n"))
    log("wrote bench/ORDERS.md")
    if (failed > 0) process.exitCode = 1
  } finally {
    for (const child of running.reverse()) {
      if (child.process.exitCode === null && child.process.signalCode === null) await child.stop()
    }
    for (const database of databases) await database.drop()
  }
}

await main()

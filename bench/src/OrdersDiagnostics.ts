import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import pg from "pg"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import type * as Processes from "./Processes.ts"

/**
 * What the orders benchmark watches while it loads a server: the CPU the server and the machine
 * used, the database's backends (who holds the hot row, and what it is doing), its WAL flushes,
 * and the cost of one committed insert, unloaded.
 */

/** pg_stat_activity is sampled this often while the diagnostic runs load the server. */
export const SAMPLE_MS = 20

/** A measured run: autocannon's figures, and the CPU the loaded server and the whole machine used meanwhile. */
export interface Run extends Load.LoadResult {
  /** The server process's CPU time over the run's wall time: 1 is its whole core. */
  readonly serverCpu: number
  /** The machine's busy share over the run (1: every core busy), from /proc/stat. */
  readonly machineCpu: number
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim())
  } catch {
    return 100
  }
})()

/** User and system ticks of a process (Linux /proc; NaN elsewhere). */
const processTicks = (pid: number | undefined) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return Number.NaN
  }
}

/** Busy and total ticks of all cores (Linux /proc; NaN elsewhere). */
const machineTicks = () => {
  try {
    const ticks = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
    const total = ticks.reduce((a, b) => a + b, 0)
    return { busy: total - ticks[3]! - ticks[4]!, total }
  } catch {
    return { busy: Number.NaN, total: Number.NaN }
  }
}

export const measure = async (server: Processes.Running, options: Load.LoadOptions): Promise<Run> => {
  const pid = server.process.pid
  const process0 = processTicks(pid)
  const machine0 = machineTicks()
  const started = performance.now()
  const result = await Load.run(options)
  const seconds = (performance.now() - started) / 1000
  const machine1 = machineTicks()
  return {
    ...result,
    serverCpu: (processTicks(pid) - process0) / CLK_TCK / seconds,
    machineCpu: (machine1.busy - machine0.busy) / (machine1.total - machine0.total)
  }
}

export const summarize = (results: ReadonlyArray<Run>) => ({
  requestsPerSecond: Load.median(results.map((r) => r.requestsPerSecond)),
  p50: Load.median(results.map((r) => r.p50)),
  p99: Load.median(results.map((r) => r.p99)),
  serverCpu: Load.median(results.map((r) => r.serverCpu)),
  machineCpu: Load.median(results.map((r) => r.machineCpu)),
  failed: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0)
})

/** Serial round trips on one connection, unloaded: a read, and a one-row insert committed (its WAL flushed). */
export const commitCost = async (databaseUrl: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query("CREATE TABLE bench_commit_probe (id bigserial PRIMARY KEY)")
    const time = async (text: string, times: number) => {
      const ms: Array<number> = []
      for (let i = 0; i < times; i++) {
        const at = performance.now()
        await client.query(text)
        ms.push(performance.now() - at)
      }
      return ms
    }
    await time("SELECT 1", 100)
    await time("INSERT INTO bench_commit_probe DEFAULT VALUES", 50)
    const read = await time("SELECT 1", 500)
    const commit = await time("INSERT INTO bench_commit_probe DEFAULT VALUES", 500)
    await client.query("DROP TABLE bench_commit_probe")
    return {
      readP50: Load.percentile(read, 50),
      commitP50: Load.percentile(commit, 50),
      commitP99: Load.percentile(commit, 99)
    }
  } finally {
    await client.end()
  }
}

/**
 * Samples the server's backends every SAMPLE_MS while `during` runs: how many wait on a lock,
 * how many are in a transaction, and, where some wait, what the backend they wait behind (not
 * itself waiting) is doing: running a statement, writing or flushing WAL, or between
 * statements of its transaction (idle in transaction: waiting for the server process).
 */
export const sampleBackends = async <A>(databaseUrl: string, during: () => Promise<A>) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const samples: Array<{ waiting: number; inTransaction: number; holders: Array<{ state: string; wait: string }> }> = []
  let running = true
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query(
        `WITH b AS (SELECT pid, state, wait_event_type, wait_event FROM pg_stat_activity
                    WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()),
              blockers AS (SELECT DISTINCT unnest(pg_blocking_pids(pid)) AS pid FROM b WHERE wait_event_type = 'Lock')
         SELECT (SELECT count(*) FROM b WHERE wait_event_type = 'Lock')::int AS waiting,
                (SELECT count(*) FROM b WHERE state <> 'idle')::int AS in_transaction,
                (SELECT coalesce(json_agg(json_build_object('state', b.state,
                          'wait', coalesce(b.wait_event_type || ':' || b.wait_event, ''))), '[]'::json)
                 FROM b JOIN blockers USING (pid) WHERE b.wait_event_type IS DISTINCT FROM 'Lock') AS holders`
      )
      const row = rows[0]
      samples.push({ waiting: row.waiting, inTransaction: row.in_transaction, holders: row.holders })
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS))
    }
  })()
  try {
    const result = await during()
    return { result, samples }
  } finally {
    running = false
    await loop
    await client.end()
  }
}

type Samples = Awaited<ReturnType<typeof sampleBackends>>["samples"]

const HOLDER_KINDS = ["between statements", "running a statement", "writing or flushing WAL"] as const
const holderKind = (holder: { state: string; wait: string }): (typeof HOLDER_KINDS)[number] =>
  holder.state.startsWith("idle in transaction")
    ? "between statements"
    : /^(IO:WAL|LWLock:WAL)/.test(holder.wait)
      ? "writing or flushing WAL"
      : "running a statement"

/** PostgreSQL's WAL flushes (fsyncs) and bytes so far, for the whole server (pg_stat_wal). */
export const walStats = async (databaseUrl: string) => {
  const [row] = await Postgres.query<{ syncs: string; bytes: string }>(
    databaseUrl,
    "SELECT wal_sync AS syncs, wal_bytes::bigint AS bytes FROM pg_stat_wal"
  )
  return { syncs: Number(row!.syncs), bytes: Number(row!.bytes) }
}

export const describeSamples = (samples: Samples) => {
  const waited = samples.filter((s) => s.waiting > 0)
  const holders = waited.flatMap((s) => s.holders)
  const kinds = Object.fromEntries(
    HOLDER_KINDS.map((kind) => [kind, holders.filter((h) => holderKind(h) === kind).length / (holders.length || 1)])
  ) as Record<(typeof HOLDER_KINDS)[number], number>
  const mean = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0) / (values.length || 1)
  return {
    samples: samples.length,
    withWaiters: waited.length / (samples.length || 1),
    meanWaiting: mean(samples.map((s) => s.waiting)),
    meanInTransaction: mean(samples.map((s) => s.inTransaction)),
    holderKinds: kinds
  }
}

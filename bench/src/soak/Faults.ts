import type * as TcpProxy from "@leadline/testkit/TcpProxy"
import type * as TestDatabase from "@leadline/testkit/TestDatabase"
import type { Running } from "../Processes.ts"
import { type Api, type Call, DROPPED, sleep } from "./Api.ts"
import type { Graph } from "./Graph.ts"

/**
 * The faults of a run, each at its own time: a server and a worker killed with SIGKILL while they
 * work (and started again), PostgreSQL stopped for 5 s (really stopped, on the soak's own cluster;
 * a cut of the TCP proxy without one), and Graph away for 10 s (connection refused). Each is
 * recorded with its span, and with what a failed request during it is forgiven:
 * - a killed server: the requests it had in flight (its connections die with it); no window for
 *   the other server, which must not notice.
 * - PostgreSQL stopped: every server answers 503 while it is away; the window runs from 1 s before
 *   the stop (the fast shutdown ends sessions as it begins) to PG_GRACE_MS (5 s) after it accepts
 *   connections again, for the servers' pools to replace the connections the shutdown broke (the
 *   run prints how long after the restart the last failure came).
 * - a killed worker, Graph away: none. No request waits on a worker or on Graph (sends are queued,
 *   then sent in the background), so neither may cost an API caller anything.
 */

export const PG_OUTAGE_MS = 5_000
export const GRAPH_DOWN_MS = 10_000
/**
 * After PostgreSQL is back: how long requests may still fail while the pools replace the
 * connections the shutdown broke. The runs so far saw none fail after the restart (bench/SOAK.md);
 * 5 s leaves room for a busy machine without hiding a server that does not recover.
 */
export const PG_GRACE_MS = 5_000

export interface Fault {
  readonly name: string
  readonly from: number
  to: number
  readonly detail: Array<string>
}

export interface Context {
  readonly api: Api
  readonly workers: Array<Running>
  readonly graph: Graph
  readonly cluster: TestDatabase.Cluster | undefined
  readonly proxy: TcpProxy.TcpProxy
  readonly startServer: () => Promise<Running>
  readonly startWorker: () => Promise<Running>
  readonly log: (line: string) => void
}

export class Faults {
  readonly done: Array<Fault> = []
  /** The servers killed, by id: their in-flight requests are forgiven. */
  readonly killedServers = new Set<number>()
  private pg: Fault | undefined

  private readonly context: Context

  constructor(context: Context) {
    this.context = context
  }

  private begin(name: string): Fault {
    const fault: Fault = { name, from: Date.now(), to: Date.now(), detail: [] }
    this.done.push(fault)
    return fault
  }

  async killServer() {
    const { api, log } = this.context
    const victim = api.live().at(-1)!
    // Mid-flight: the moment one of the soak's requests is under way on it (within a second).
    for (const giveUp = Date.now() + 1_000; api.inFlight(victim.id) === 0 && Date.now() < giveUp; ) {
      await new Promise((resolve) => setImmediate(resolve))
    }
    const fault = this.begin(`server ${victim.id} killed (SIGKILL)`)
    victim.killedAt = Date.now()
    this.killedServers.add(victim.id)
    const inFlight = api.inFlight(victim.id)
    victim.running.process.kill("SIGKILL")
    log(`killed server ${victim.id} (SIGKILL) with ${inFlight} requests in flight; starting another`)
    const next = api.add(await this.context.startServer())
    fault.to = Date.now()
    fault.detail.push(
      `${inFlight} of the soak's requests in flight on it; server ${next.id} started in its place after ${((fault.to - fault.from) / 1000).toFixed(1)} s`
    )
    log(`server ${next.id} up`)
  }

  async killWorker() {
    const { workers, log } = this.context
    const fault = this.begin("worker 1 killed (SIGKILL)")
    workers[0]!.process.kill("SIGKILL")
    log("killed worker 1 (SIGKILL); starting another in 3 s")
    await sleep(3_000)
    workers[0] = await this.context.startWorker()
    fault.to = Date.now()
    fault.detail.push(`a new worker ran ${((fault.to - fault.from) / 1000).toFixed(1)} s later`)
    log("worker restarted")
  }

  async stopPostgres() {
    const { cluster, proxy, log } = this.context
    const fault = this.begin(
      cluster === undefined ? "PostgreSQL cut off (TCP proxy)" : "PostgreSQL stopped (pg_ctl stop -m fast)"
    )
    this.pg = fault
    log(`${fault.name} for ${PG_OUTAGE_MS / 1000} s`)
    if (cluster !== undefined) {
      await cluster.stop()
      await sleep(PG_OUTAGE_MS)
      await cluster.start()
    } else {
      await proxy.cut()
      await sleep(PG_OUTAGE_MS)
      await proxy.restore()
    }
    fault.to = Date.now()
    log("PostgreSQL back")
  }

  async graphDown() {
    const { graph, log } = this.context
    const fault = this.begin("Graph away (connection refused)")
    const cut = await graph.down()
    log(`Graph away for ${GRAPH_DOWN_MS / 1000} s (${cut} requests cut unanswered)`)
    await sleep(GRAPH_DOWN_MS)
    await graph.up()
    fault.to = Date.now()
    fault.detail.push(`${cut} sends cut unanswered when it went`)
    log("Graph back")
  }

  /** Whether a failed request (5xx, dropped) is forgiven by a fault, and by which. */
  forgiven(call: Call): string | undefined {
    if (this.killedServers.has(call.server)) return "killed server"
    const pg = this.pg
    if (pg !== undefined && call.end >= pg.from - 1_000 && call.start <= pg.to + PG_GRACE_MS) return "PostgreSQL"
    return undefined
  }

  /** The last failed request after PostgreSQL came back: how long its recovery took, as the callers saw it. */
  pgRecovery(calls: ReadonlyArray<Call>): number | undefined {
    const pg = this.pg
    if (pg === undefined) return undefined
    const failures = calls.filter(
      (call) =>
        (call.status >= 500 || call.status === DROPPED) && !this.killedServers.has(call.server) && call.end >= pg.to
    )
    return failures.length === 0 ? 0 : Math.max(...failures.map((call) => call.end)) - pg.to
  }
}

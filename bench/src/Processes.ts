import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { constants, tmpdir } from "node:os"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..")

const hasTaskset = (() => {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** Servers get core 0 and the load generator core 1, where the machine has two cores and taskset. */
export const pinning = hasTaskset ? "servers on core 0, load generator on core 1 (taskset)" : "not pinned (no taskset)"

/** The load generator on `core` (1 unless told: the two-core layout above). */
export const pinSelf = (core = 1) => {
  if (hasTaskset) execFileSync("taskset", ["-p", "-c", String(core), String(process.pid)], { stdio: "ignore" })
}

// An interrupted run must not leave its servers and workers behind: they went on sending a
// campaign and loading the machine under the runs after it.
const children = new Set<ChildProcess>()
const killChildren = () => {
  for (const child of children) child.kill("SIGKILL")
}
process.on("exit", killChildren)
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    killChildren()
    process.exit(128 + constants.signals[signal])
  })
}

export interface Running {
  readonly url: string
  readonly process: ChildProcess
  readonly stop: () => Promise<void>
}

/** `cores`: the CPU list taskset pins the process to (core 0 unless told). */
const launch = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  ready: RegExp,
  cwd: string = root,
  cores = "0"
) =>
  new Promise<Running>((resolve, reject) => {
    const command = hasTaskset ? "taskset" : process.execPath
    const argv = hasTaskset ? ["-c", cores, process.execPath, ...args] : [...args]
    // BENCH_CPU_PROF_DIR: every server and worker writes a V8 CPU profile there when it stops.
    const profile = process.env.BENCH_CPU_PROF_DIR
    const child = spawn(command, argv, {
      cwd,
      env: {
        ...process.env,
        ...env,
        ...(profile === undefined ? {} : { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profile}` })
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    let log = ""
    const timer = setTimeout(() => reject(new Error(`did not start:\n${log}`)), 60_000)
    const exited = new Promise<void>((done) =>
      child.on("exit", () => {
        children.delete(child)
        done()
      })
    )
    const onData = (chunk: Buffer) => {
      log += chunk.toString()
      const match = ready.exec(log)
      if (match !== null) {
        clearTimeout(timer)
        resolve({
          url: match[1] === undefined ? "" : `http://127.0.0.1:${match[1]}`,
          process: child,
          stop: () => {
            child.kill("SIGTERM")
            return exited
          }
        })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.on("exit", (code) => reject(new Error(`exited with ${code}:\n${log}`)))
  })

export const ADMIN_TOKEN = "lla_bench_token"

/** Runs the workspace's packages from their sources (their `exports` condition), as `npm start` does. */
const SOURCE_CONDITION = "--conditions=@leadline/source"

/**
 * Leadline's reference server from this checkout, or from `checkout` (another version, for a
 * before/after run), pinned to `cores` (a taskset CPU list; core 0 unless told).
 */
export const leadline = (databaseUrl: string, env: Record<string, string> = {}, checkout: string = root, cores = "0") =>
  launch(
    [SOURCE_CONDITION, "packages/server/src/main.ts"],
    {
      DATABASE_URL: databaseUrl,
      PORT: "0",
      HOST: "127.0.0.1",
      LEADLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      LEADLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "leadline-bench-")),
      LOG_LEVEL: "info",
      // The baseline has no rate limiting; the benchmark measures the rest.
      LEADLINE_RATE_LIMIT: "0",
      ...env
    },
    /Listening on http:\/\/[^:]+:(\d+)/,
    checkout,
    cores
  )

/** Leadline's reference server on the embedded PGlite in `dataDir` (no `DATABASE_URL`, whatever the shell sets). */
export const leadlineEmbedded = (dataDir: string, env: Record<string, string> = {}) => {
  const { DATABASE_URL: _ignored, ...inherited } = process.env
  return launch(
    [SOURCE_CONDITION, "packages/server/src/main.ts"],
    {
      ...(inherited as Record<string, string>),
      DATABASE_URL: "",
      PORT: "0",
      HOST: "127.0.0.1",
      LEADLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      LEADLINE_DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      LEADLINE_RATE_LIMIT: "0",
      ...env
    },
    /Listening on http:\/\/[^:]+:(\d+)/
  )
}

/** The hand-written baseline (bench/baseline), on a database of its own: it applies its schema on start. */
export const baseline = (databaseUrl: string) =>
  launch(
    ["bench/baseline/Server.ts"],
    { DATABASE_URL: databaseUrl, PORT: "0", HOST: "127.0.0.1" },
    /Listening on http:\/\/[^:]+:(\d+)/
  )

export const worker = (databaseUrl: string, env: Record<string, string> = {}) =>
  launch(
    [SOURCE_CONDITION, "packages/server/src/bin/leadline.ts", "worker"],
    {
      DATABASE_URL: databaseUrl,
      LEADLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "leadline-bench-")),
      LOG_LEVEL: "info",
      ...env
    },
    /Webhook worker on()/
  )

/** A process's resident set in MB, from /proc (taskset execs the server, so the pid is the server's). */
export const residentMB = (pid: number | undefined): number => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1])
    return Number.isFinite(kb) ? Math.round(kb / 1024) : Number.NaN
  } catch {
    return Number.NaN
  }
}

/** The CPU time a process has used so far, in seconds (user and system, from /proc). */
export const cpuSeconds = (pid: number | undefined): number => {
  try {
    // The command name, in parentheses, may hold spaces: the fields after it are counted from there.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return Number.NaN
  }
}

/** How long a server has had no request when its resident set is read as "idle". */
export const IDLE_SECONDS = 4

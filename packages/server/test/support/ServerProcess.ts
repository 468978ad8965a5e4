import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const main = join(import.meta.dirname, "..", "..", "src", "main.ts")
const cli = join(import.meta.dirname, "..", "..", "src", "bin", "leadline.ts")
/** The workspace's packages run from their sources (their `exports` condition), as `npm start` runs them. */
const SOURCE_CONDITION = "--conditions=@leadline/source"

export interface Launched {
  readonly process: ChildProcess
  /** Everything the process logged so far. */
  readonly log: () => string
  /** Sends the signal and waits for the process to end; resolves to its exit code or signal. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | string>
}

export interface ServerProcess extends Launched {
  readonly baseUrl: string
  readonly adminToken: string
}

/** What configures a Leadline process (see Config.ts): never inherited from the developer's shell. */
const SETTING = /^(LEADLINE_|WEBHOOK_)|^(DATABASE_URL|REDIS_URL|PORT|HOST|LOG_LEVEL)$/

/**
 * The environment for a Leadline process started by a test: this process's,
 * without any Leadline setting (a `DATABASE_URL` or `LEADLINE_ADMIN_TOKEN` in
 * the developer's shell would put an "embedded" server on PostgreSQL, or stop
 * it from writing its admin-token file), plus exactly the settings given.
 * An `undefined` value leaves a setting unset.
 */
export const environment = (settings: Record<string, string | undefined> = {}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !SETTING.test(name)) env[name] = value
  }
  for (const [name, value] of Object.entries(settings)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}

export const tempDataDir = () => mkdtempSync(join(tmpdir(), "leadline-server-"))
export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true })

/** Starts `node <args>` and resolves once its log matches `ready`, with the match. */
const launch = (args: ReadonlyArray<string>, env: Record<string, string>, ready: RegExp, what: string) =>
  new Promise<Launched & { readonly match: RegExpExecArray }>((resolve, reject) => {
    const child = spawn(process.execPath, [SOURCE_CONDITION, ...args], {
      env: environment(env),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let log = ""
    let started = false
    const exited = new Promise<number | string>((done) =>
      child.on("exit", (code, signal) => done(code ?? signal ?? "unknown"))
    )
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${what} did not start in time:\n${log}`))
    }, 60_000)
    const onData = (chunk: Buffer) => {
      log += chunk.toString()
      const match = started ? null : ready.exec(log)
      if (match === null) return
      started = true
      clearTimeout(timer)
      resolve({
        match,
        process: child,
        log: () => log,
        stop: (signal = "SIGTERM") => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal)
          return exited
        }
      })
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    void exited.then((code) => {
      clearTimeout(timer)
      if (!started) reject(new Error(`${what} exited (${code}) before starting:\n${log}`))
    })
  })

/**
 * The reference server as its own process, as it runs in production: on a free
 * loopback port, with the given data directory and environment.
 */
export const start = async (options: { readonly dataDir: string; readonly env?: Record<string, string> }) => {
  const launched = await launch(
    [main],
    {
      PORT: "0",
      HOST: "127.0.0.1",
      LEADLINE_DATA_DIR: options.dataDir,
      LOG_LEVEL: "info",
      // Load tests here make many requests with one key; the limit tests set their own.
      LEADLINE_RATE_LIMIT: "0",
      ...options.env
    },
    /Listening on http:\/\/[^:]+:(\d+)/,
    "server"
  )
  return {
    ...launched,
    baseUrl: `http://127.0.0.1:${launched.match[1]}`,
    adminToken: options.env?.LEADLINE_ADMIN_TOKEN ?? readFileSync(join(options.dataDir, "admin-token"), "utf8").trim()
  } satisfies ServerProcess
}

/** `leadline worker` as its own process; resolves once it has started. */
export const startWorker = (options: { readonly dataDir: string; readonly env?: Record<string, string> }) =>
  launch(
    [cli, "worker"],
    { LEADLINE_DATA_DIR: options.dataDir, LOG_LEVEL: "info", ...options.env },
    /Webhook worker on/,
    "worker"
  )

/** `leadline serve` as its own process, as an operator starts it; resolves once it listens. */
export const startServe = async (options: { readonly dataDir: string; readonly env?: Record<string, string> }) => {
  const launched = await launch(
    [cli, "serve"],
    { PORT: "0", HOST: "127.0.0.1", LEADLINE_DATA_DIR: options.dataDir, LOG_LEVEL: "info", ...options.env },
    /Listening on http:\/\/[^:]+:(\d+)/,
    "leadline serve"
  )
  return { ...launched, baseUrl: `http://127.0.0.1:${launched.match[1]}` }
}

export interface CliRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `leadline <args>` to its end, with only the given Leadline settings. */
export const runCli = (args: ReadonlyArray<string>, env: Record<string, string | undefined>) =>
  new Promise<CliRun>((resolve, reject) => {
    const child = spawn(process.execPath, [SOURCE_CONDITION, cli, ...args], {
      env: environment({ NO_COLOR: "1", ...env }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

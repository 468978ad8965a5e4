import { execFile, execFileSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Database from "@leadline/sql-adapter/Database"

export interface TestDatabase {
  readonly kind: "postgres" | "pglite"
  /** What ran, for the test output: "PostgreSQL (schema t_…)" or "PGlite (in memory)". */
  readonly label: string
  readonly config: Database.Config
  /** Drops what `make` created. */
  readonly dispose: () => Promise<void>
}

/** One statement on the PostgreSQL server at `url`, on a connection of its own (as its superuser, in the tests). */
export const adminQuery = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(statement)
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
    )
  )

/**
 * A fresh database for one test suite: a new schema on the PostgreSQL server of
 * `TEST_DATABASE_URL` when it is set, else an in-memory PGlite. It logs which.
 * (No Docker engine runs on our machines, so testcontainers is not tried.)
 */
export const make = async (
  options: { readonly postgres?: "when-configured" | "never" } = {}
): Promise<TestDatabase> => {
  const url = process.env.TEST_DATABASE_URL
  if (url === undefined || url === "" || options.postgres === "never") {
    console.log("test database: PGlite (in memory)")
    return {
      kind: "pglite",
      label: "PGlite (in memory)",
      config: { dataDir: Database.MEMORY },
      dispose: async () => {}
    }
  }
  const schema = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await adminQuery(url, `CREATE SCHEMA ${schema}`)
  console.log(`test database: PostgreSQL (TEST_DATABASE_URL, schema ${schema})`)
  return {
    kind: "postgres",
    label: `PostgreSQL (schema ${schema})`,
    config: { url: Redacted.make(url), dataDir: Database.MEMORY, schema, maxConnections: 10 },
    dispose: () => adminQuery(url, `DROP SCHEMA ${schema} CASCADE`)
  }
}

/**
 * The three stores a behaviour is shown on: memory (no database), embedded PGlite, and PostgreSQL
 * when `TEST_DATABASE_URL` is set (PGlite again otherwise). `database` is what `make` takes, or
 * undefined for the memory stores.
 */
export const STORES = [
  { name: "memory", database: undefined },
  { name: "embedded PGlite", database: { postgres: "never" } },
  { name: "PostgreSQL (PGlite when TEST_DATABASE_URL is unset)", database: { postgres: "when-configured" } }
] as const

/** A throwaway PostgreSQL server of the test's own, which it may stop and start at will. */
export interface Cluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  /** `pg_ctl stop -m fast`: a real shutdown (sessions get 57P01 admin_shutdown), waiting until it is down. */
  readonly stop: () => Promise<void>
  /** Starts it again on the same port, waiting until it accepts connections. */
  readonly start: () => Promise<void>
  /** Stops it if it runs and deletes its directory. */
  readonly destroy: () => Promise<void>
  /** The server's log (its errors, a deadlock's cycle), until `destroy`. */
  readonly logFile: string
}

const POSTGRESQL_ROOT = "/usr/lib/postgresql"

/**
 * How a cluster can be made here: the newest PostgreSQL server binaries with
 * initdb and pg_ctl, and, as root (initdb refuses to run as root), the
 * `postgres` user to run them as. A string says why not.
 */
export const clusterSupport = ():
  | { readonly bin: string; readonly runAs: { readonly uid: number; readonly gid: number } | undefined }
  | string => {
  const has = (version: string) =>
    existsSync(join(POSTGRESQL_ROOT, version, "bin", "initdb")) &&
    existsSync(join(POSTGRESQL_ROOT, version, "bin", "pg_ctl"))
  const versions = existsSync(POSTGRESQL_ROOT)
    ? readdirSync(POSTGRESQL_ROOT)
        .filter(has)
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (versions[0] === undefined) return `no initdb and pg_ctl under ${POSTGRESQL_ROOT}/*/bin`
  const bin = join(POSTGRESQL_ROOT, versions[0], "bin")
  if (process.getuid?.() !== 0) return { bin, runAs: undefined }
  try {
    const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { stdio: "pipe" }).toString())
    return { bin, runAs: { uid: id("-u"), gid: id("-g") } }
  } catch {
    return "running as root, and there is no postgres user to run initdb as"
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

/**
 * initdb in a temporary directory and a server on a free loopback port, so a
 * test can really stop and start PostgreSQL without touching the server
 * others use. Tools run asynchronously: requests in flight keep moving while
 * the server goes down. If the test process exits without `destroy`, the
 * server is stopped on the way out.
 */
export const cluster = async (): Promise<Cluster> => {
  const support = clusterSupport()
  if (typeof support === "string") throw new Error(`cannot make a PostgreSQL cluster: ${support}`)
  const dir = mkdtempSync(join(tmpdir(), "leadline-pg-"))
  const data = join(dir, "data")
  if (support.runAs !== undefined) chownSync(dir, support.runAs.uid, support.runAs.gid)
  const command = (tool: string, args: ReadonlyArray<string>): [string, Array<string>] =>
    support.runAs === undefined
      ? [join(support.bin, tool), [...args]]
      : ["runuser", ["-u", "postgres", "--", join(support.bin, tool), ...args]]
  const run = (tool: string, args: ReadonlyArray<string>) =>
    new Promise<void>((resolve, reject) => {
      const [file, argv] = command(tool, args)
      execFile(file, argv, (error, _stdout, stderr) =>
        error === null ? resolve() : reject(new Error(`${tool} failed: ${stderr || error.message}`))
      )
    })
  const port = await freePort()
  // Durability is not what is under test: no fsync makes initdb and every commit cheap.
  await run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`
  const start = () => run("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "30", "start"])
  const stop = () => run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"])
  const onExit = () => {
    try {
      const [file, argv] = command("pg_ctl", ["-D", data, "-m", "immediate", "stop"])
      execFileSync(file, argv, { stdio: "ignore" })
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true })
  }
  process.once("exit", onExit)
  await start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    logFile: join(dir, "log"),
    start,
    stop,
    destroy: async () => {
      process.off("exit", onExit)
      await stop().catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

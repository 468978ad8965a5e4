import { afterAll, describe, expect, it } from "vitest"
import * as Postgres from "./support/Postgres.ts"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as Setups from "./support/Setups.ts"
import * as Resources from "@leadline/testkit/Resources"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

// Every table some resource's ledger names (the testkit's coverage test holds the ledger to the schema).
const TABLES = [
  ...new Set([
    ...Resources.all.flatMap((resource) => resource.ledger.tables.map((table) => table.name)),
    ...Resources.globalTables.map((global) => global.table)
  ])
].sort()

interface Target {
  readonly env: Record<string, string>
  readonly query: <A>(statement: string) => Promise<ReadonlyArray<A>>
}

// Each run of the CLI starts a Node process, and on the embedded database PGlite too: seconds each on a busy machine.

/**
 * `leadline migrate` on a database that has never seen Leadline: it applies
 * every migration, prints them, and records them; a second run applies none.
 */
const migrates = (target: () => Promise<Target>) => {
  it("applies every migration on a fresh database, prints them, and applies none the second time", {
    timeout: 60_000
  }, async () => {
    const { env, query } = await target()
    const first = await ServerProcess.runCli(["migrate"], env)
    expect({ status: first.status, stderr: first.stderr }).toEqual({ status: 0, stderr: "" })
    const lines = first.stdout.trimEnd().split("\n")
    const printed = lines.slice(1).map((line) => {
      const match = /^ {2}(\d+) ([a-z0-9_]+)$/.exec(line)
      expect(match, line).not.toBeNull()
      return { migration_id: Number(match![1]), name: match![2]! }
    })
    expect(lines[0]).toBe(`Applied ${printed.length} migration(s):`)
    expect(printed.slice(0, 2)).toEqual([
      { migration_id: 1, name: "accounts_leads_idempotency_events" },
      { migration_id: 2, name: "webhooks" }
    ])
    expect(printed.map((migration) => migration.migration_id)).toEqual(printed.map((_, i) => i + 1))

    expect(
      await query<{ migration_id: number; name: string }>(
        "SELECT migration_id, name FROM leadline_migrations ORDER BY migration_id"
      )
    ).toEqual(printed)
    const tables = await query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
       WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
    )
    expect(tables.map((table) => table.table_name)).toEqual([...TABLES, "leadline_migrations"].sort())

    const again = await ServerProcess.runCli(["migrate"], env)
    expect(again).toEqual({ status: 0, stdout: "No migrations to apply: the database is up to date\n", stderr: "" })
    const json = await ServerProcess.runCli(["migrate", "--json"], env)
    expect(json).toEqual({ status: 0, stdout: "[]\n", stderr: "" })
    expect(await query("SELECT migration_id FROM leadline_migrations")).toHaveLength(printed.length)
  })

  it("prints what it applied as JSON with --json", { timeout: 60_000 }, async () => {
    const { env, query } = await target()
    const run = await ServerProcess.runCli(["migrate", "--json"], env)
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" })
    const applied = JSON.parse(run.stdout) as Array<{ id: number; name: string }>
    expect(applied.slice(0, 2)).toEqual([
      { id: 1, name: "accounts_leads_idempotency_events" },
      { id: 2, name: "webhooks" }
    ])
    const recorded = await query<{ migration_id: number; name: string }>(
      "SELECT migration_id, name FROM leadline_migrations ORDER BY migration_id"
    )
    expect(recorded.map((row) => ({ id: row.migration_id, name: row.name }))).toEqual(applied)
  })
}

const embedded = async (): Promise<Target> => {
  const dataDir = ServerProcess.tempDataDir()
  cleanups.push(() => ServerProcess.removeDir(dataDir))
  return {
    env: { LEADLINE_DATA_DIR: dataDir },
    // Opened only after the command has ended: the embedded database belongs to one process at a time.
    query: Setups.queryEmbedded(dataDir)
  }
}

describe("leadline migrate on the embedded database (LEADLINE_DATA_DIR)", () => {
  migrates(embedded)
})

if (Postgres.url !== undefined) {
  const url = Postgres.url
  console.log("cli: leadline migrate also runs on a fresh PostgreSQL database (TEST_DATABASE_URL's server)")
  describe("leadline migrate on a fresh PostgreSQL database (DATABASE_URL)", () => {
    migrates(async () => {
      const name = `leadline_cli_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
      await Postgres.query(url, `CREATE DATABASE ${name}`)
      cleanups.push(() => Postgres.query(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      const databaseUrl = new URL(url)
      databaseUrl.pathname = `/${name}`
      const dataDir = ServerProcess.tempDataDir()
      cleanups.push(() => ServerProcess.removeDir(dataDir))
      return {
        env: { DATABASE_URL: databaseUrl.toString(), LEADLINE_DATA_DIR: dataDir },
        query: <A>(statement: string) => Postgres.query<A>(databaseUrl.toString(), statement)
      }
    })
  })
} else {
  console.log("cli: leadline migrate on PostgreSQL is not run: TEST_DATABASE_URL is unset")
}

describe("leadline serve", () => {
  it("starts the API server, answers /healthz and /readyz, and exits 0 on SIGTERM", { timeout: 60_000 }, async () => {
    const dataDir = ServerProcess.tempDataDir()
    cleanups.push(() => ServerProcess.removeDir(dataDir))
    const server = await ServerProcess.startServe({ dataDir })
    cleanups.push(() => server.stop())
    const health = await fetch(`${server.baseUrl}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: "ok" })
    const ready = await fetch(`${server.baseUrl}/readyz`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: "ready" })
    expect(server.log()).toContain(`Database: embedded PGlite in ${dataDir}`)
    expect(await server.stop("SIGTERM")).toBe(0)
  })
})

import { execFileSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * A throwaway PostgreSQL cluster of our own (initdb in a temporary directory, on
 * a free loopback port), so that the soak can really stop and start PostgreSQL
 * without touching the server other people on the machine use. Needs the
 * PostgreSQL server binaries; `available()` says whether they are here.
 */

const binDir = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")) && existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin")
}

export const available = (): boolean => binDir() !== undefined

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

export interface Cluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  readonly stop: () => void
  readonly start: () => void
  /** Stops the cluster and deletes its directory. */
  readonly destroy: () => void
}

export const create = async (): Promise<Cluster> => {
  const bin = binDir()
  if (bin === undefined) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql")
  const dir = mkdtempSync(join(tmpdir(), "leadline-pg-"))
  const data = join(dir, "data")
  const port = await freePort()
  // initdb refuses to run as root: as root, the cluster belongs to the postgres user.
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"]).toString())
    chownSync(dir, id("-u"), id("-g"))
  }
  const run = (tool: string, args: ReadonlyArray<string>) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", join(bin, tool), ...args], { stdio: "pipe" })
      : execFileSync(join(bin, tool), args, { stdio: "pipe" })
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`
  const start = () => {
    run("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"])
  }
  const stop = () => {
    run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
  }
  start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    destroy: () => {
      try {
        stop()
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

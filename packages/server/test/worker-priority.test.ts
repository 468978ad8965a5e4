import { existsSync, readdirSync } from "node:fs"
import { getPriority } from "node:os"
import { afterAll, describe, expect, it } from "vitest"
import * as ServerProcess from "./support/ServerProcess.ts"
import { until } from "./support/Until.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/** The nice of each of a process's threads (Linux); of the process where there is no /proc. */
const priorities = (pid: number): ReadonlyArray<number> =>
  existsSync(`/proc/${pid}/task`)
    ? readdirSync(`/proc/${pid}/task`).map((thread) => getPriority(Number(thread)))
    : [getPriority(pid)]

/** `leadline worker` alone on a data directory of its own (the embedded database is then its own). */
const worker = async (env: Record<string, string> = {}) => {
  const dataDir = ServerProcess.tempDataDir()
  cleanups.push(() => ServerProcess.removeDir(dataDir))
  const started = await ServerProcess.startWorker({ dataDir, env })
  cleanups.push(() => started.stop())
  // The priority is set once the worker has read its settings; its log says so.
  await until(
    async () => started.log(),
    (log) => /Worker running at nice|Could not set the worker's priority/.test(log),
    30_000
  )
  return started
}

describe("leadline worker's scheduling priority", () => {
  it("runs niced by 10 unless told otherwise, below the servers it shares a host with", async () => {
    const started = await worker()
    expect(started.log()).toContain("Worker running at nice 10")
    // Every thread, V8's and libuv's made before the setting was read included.
    const threads = priorities(started.process.pid!)
    expect(threads.length).toBeGreaterThan(0)
    expect(new Set(threads)).toEqual(new Set([10]))
  })

  it("takes LEADLINE_WORKER_NICE, 0 included", async () => {
    const started = await worker({ LEADLINE_WORKER_NICE: "0" })
    expect(started.log()).toContain("Worker running at nice 0")
    expect(new Set(priorities(started.process.pid!))).toEqual(new Set([0]))
  })

  it("refuses a value outside -20..19 before it starts, naming the setting", async () => {
    const dataDir = ServerProcess.tempDataDir()
    cleanups.push(() => ServerProcess.removeDir(dataDir))
    const run = await ServerProcess.runCli(["worker"], { LEADLINE_DATA_DIR: dataDir, LEADLINE_WORKER_NICE: "25" })
    expect(run.status).not.toBe(0)
    expect(run.stdout + run.stderr).toContain("LEADLINE_WORKER_NICE")
    expect(run.stdout + run.stderr).not.toContain("Webhook worker on")
  })
})

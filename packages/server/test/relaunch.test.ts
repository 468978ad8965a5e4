import { readFileSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import * as Relaunch from "../src/Relaunch.ts"
import * as ServerProcess from "./support/ServerProcess.ts"

const SETTING = "glibc.malloc.trim_threshold=131072"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/** Whether this machine is one the relaunch applies to: Linux, glibc, and `process.execve`. */
const applies =
  process.platform === "linux" &&
  typeof (process as unknown as { execve?: unknown }).execve === "function" &&
  /\/libc\.so\.6$/m.test(readFileSync("/proc/self/maps", "utf8"))

const environOf = (pid: number) =>
  readFileSync(`/proc/${pid}/environ`, "utf8")
    .split("\0")
    .filter((entry) => entry.startsWith("GLIBC_TUNABLES="))

/** src/Relaunch.ts: a long-running process relaunches once with glibc's malloc giving freed memory back. */
describe("the relaunch with malloc's trim threshold", () => {
  it("adds the setting to the environment, after the operator's own tunables", () => {
    expect(Relaunch.relaunchEnvironment({ PATH: "/bin" }, [])).toEqual({ PATH: "/bin", GLIBC_TUNABLES: SETTING })
    expect(Relaunch.relaunchEnvironment({ GLIBC_TUNABLES: "glibc.pthread.rseq=0" }, ["--conditions=x"])).toEqual({
      GLIBC_TUNABLES: `glibc.pthread.rseq=0:${SETTING}`
    })
  })

  it("does not relaunch where malloc is tuned already (the relaunched process, or the operator's choice) nor under a debugger", () => {
    expect(Relaunch.relaunchEnvironment({ GLIBC_TUNABLES: SETTING }, [])).toBeUndefined()
    expect(Relaunch.relaunchEnvironment({ GLIBC_TUNABLES: "glibc.malloc.arena_max=2" }, [])).toBeUndefined()
    expect(Relaunch.relaunchEnvironment({}, ["--inspect=9229"])).toBeUndefined()
    expect(Relaunch.relaunchEnvironment({ NODE_OPTIONS: "--max-old-space-size=512 --inspect-brk" }, [])).toBeUndefined()
  })

  it("the server relaunches in place, same pid, before it serves", async () => {
    const dataDir = ServerProcess.tempDataDir()
    cleanups.push(() => ServerProcess.removeDir(dataDir))
    const server = await ServerProcess.start({ dataDir, env: { LEADLINE_ADMIN_TOKEN: "lla_relaunch_test" } })
    cleanups.push(() => server.stop())
    const health = await fetch(`${server.baseUrl}/healthz`)
    expect(health.status).toBe(200)
    if (process.platform === "linux") {
      expect(environOf(server.process.pid!)).toEqual(applies ? [`GLIBC_TUNABLES=${SETTING}`] : [])
    }
  })
})

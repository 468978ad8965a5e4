import { readFileSync } from "node:fs"

/**
 * Relaunches a long-running process once, in place (same pid, arguments and environment), with
 * glibc's malloc told to give freed memory back: `GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072`.
 *
 * glibc raises the point above which it returns a heap's free top to the system each time a large
 * block is freed (up to 64 MB), and never lowers it. V8 compiles hot WebAssembly in its helper
 * threads, each with a heap of its own: compiling PostgreSQL's parser alone takes about 600 MB for
 * a moment, and under the raised threshold the threads kept 40-80 MB of it for good. A fixed
 * threshold (glibc's own starting one) lets them return it: a server idling on the embedded
 * database held 240-280 MB, 183-198 MB with it; no more system calls under a load
 * (docs/performance.md, "Memory").
 *
 * The setting is read when a process starts, hence the relaunch, before the server's modules load
 * (about 50 ms). Only where it means something: Linux with glibc and a Node.js that has
 * `process.execve`. Left as it is when `GLIBC_TUNABLES` already sets any of malloc's (set one
 * yourself to keep your own, or to keep the process from relaunching), and under a debugger.
 */

const SETTING = "glibc.malloc.trim_threshold=131072"

type Execve = (file: string, args: ReadonlyArray<string>, env: Record<string, string | undefined>) => never

/** Whether this process runs on glibc (musl and others ignore `GLIBC_TUNABLES`). */
const onGlibc = (): boolean => {
  try {
    return /\/libc\.so\.6$/m.test(readFileSync("/proc/self/maps", "utf8"))
  } catch {
    return false
  }
}

/** The environment to relaunch with, or `undefined` to go on as this process is. */
export const relaunchEnvironment = (
  env: Readonly<Record<string, string | undefined>>,
  execArgv: ReadonlyArray<string>
): Record<string, string | undefined> | undefined => {
  const tunables = env.GLIBC_TUNABLES ?? ""
  if (tunables.includes("glibc.malloc.")) return undefined
  const debugging = [...execArgv, ...(env.NODE_OPTIONS ?? "").split(/\s+/)].some((arg) => arg.startsWith("--inspect"))
  if (debugging) return undefined
  return { ...env, GLIBC_TUNABLES: tunables === "" ? SETTING : `${tunables}:${SETTING}` }
}

/** Relaunches this process as above, or returns when it need not (or cannot). */
export const withMallocTrim = (): void => {
  if (process.platform !== "linux") return
  const execve = (process as unknown as { readonly execve?: Execve }).execve
  if (typeof execve !== "function") return
  const env = relaunchEnvironment(process.env, process.execArgv)
  if (env === undefined || !onGlibc()) return
  try {
    execve.call(process, process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env)
  } catch {
    // Not relaunched (a permission model, a sandbox): the process goes on as it is.
  }
}

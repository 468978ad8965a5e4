import { execFileSync } from "node:child_process"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..")

/** The code a report measured: the commit, and whether the product's code had uncommitted changes. */
export const describe = (): string => {
  try {
    const git = (...args: Array<string>) => execFileSync("git", args, { cwd: root }).toString().trim()
    const dirty = git("status", "--porcelain", "--", "packages", "examples") !== ""
    return `commit ${git("rev-parse", "--short", "HEAD")}${dirty ? " with uncommitted changes under packages/ or examples/" : ""}`
  } catch {
    return "commit unknown"
  }
}

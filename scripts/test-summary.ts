// Totals the JSON reports every package's vitest run leaves behind, so CI ends
// with one "N passed, M failed" line for the whole repository.
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
let passed = 0
let failed = 0
const missing: Array<string> = []

const count = (report: string) => {
  const json = JSON.parse(readFileSync(report, "utf8"))
  passed += json.numPassedTests
  failed += json.numFailedTests + (json.success === false && json.numFailedTests === 0 ? 1 : 0)
}

// Every workspace of the root's list (a `dir/*` entry is each folder in it) with a vitest config.
const workspaces: ReadonlyArray<string> = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).workspaces
for (const pattern of workspaces) {
  const dirs = pattern.endsWith("/*")
    ? readdirSync(join(root, pattern.slice(0, -2))).map((name) => `${pattern.slice(0, -2)}/${name}`)
    : [pattern]
  for (const dir of dirs) {
    if (dir === "bench" || !existsSync(join(root, dir, "vitest.config.ts"))) continue
    const report = join(root, dir, ".vitest-report.json")
    if (existsSync(report)) count(report)
    else missing.push(dir)
  }
}
// The benchmark's baseline is checked only where a PostgreSQL server is (CI runs it), and the
// contract-test example only by the pack check, against a server from the packs: counted when they ran.
for (const ran of ["bench", "examples/contract-test"]) {
  if (existsSync(join(root, ran, ".vitest-report.json"))) count(join(root, ran, ".vitest-report.json"))
}
// A package whose run left no report did not run its tests: that counts as a failure.
if (missing.length > 0) console.log(`no test report from: ${missing.join(", ")}`)
failed += missing.length
console.log(`${passed} passed, ${failed} failed`)
process.exitCode = failed > 0 ? 1 : 0

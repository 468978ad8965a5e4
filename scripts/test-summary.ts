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

for (const group of ["packages", "examples"]) {
  for (const name of readdirSync(join(root, group))) {
    const dir = join(root, group, name)
    if (!existsSync(join(dir, "vitest.config.ts"))) continue
    const report = join(dir, ".vitest-report.json")
    if (existsSync(report)) count(report)
    else missing.push(`${group}/${name}`)
  }
}
// The benchmark's baseline is checked only where a PostgreSQL server is (CI runs it): counted when it ran.
if (existsSync(join(root, "bench", ".vitest-report.json"))) count(join(root, "bench", ".vitest-report.json"))
// A package whose run left no report did not run its tests: that counts as a failure.
if (missing.length > 0) console.log(`no test report from: ${missing.join(", ")}`)
failed += missing.length
console.log(`${passed} passed, ${failed} failed`)
process.exitCode = failed > 0 ? 1 : 0

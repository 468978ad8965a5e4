// Runs on `npm install` / `npm ci` (the root `prepare` script): builds the dashboard so that
// `npm start` serves it with no further step. Without Vite (an install with --omit=dev) it
// says so and leaves the server to show its "not built" page; a failed build fails the install.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"

const root = new URL("..", import.meta.url).pathname
const require = createRequire(new URL("../packages/dashboard/package.json", import.meta.url))

// Vite's own CLI, found from the dashboard's folder; absent when devDependencies were left out.
const viteCli = (): string | undefined => {
  try {
    const cli = `${require.resolve("vite/package.json").slice(0, -"package.json".length)}bin/vite.js`
    return existsSync(cli) ? cli : undefined
  } catch {
    return undefined
  }
}

const vite = viteCli()
if (vite === undefined) {
  console.log("dashboard: Vite is not installed (production install?), so the dashboard is not built")
  process.exit(0)
}

const built = spawnSync(process.execPath, [vite, "build"], {
  cwd: `${root}packages/dashboard`,
  stdio: "inherit"
})
if (built.status !== 0) {
  console.error("dashboard: the build failed (see above)")
  process.exit(built.status ?? 1)
}
console.log("dashboard: built into packages/dashboard/dist, served at /dashboard")

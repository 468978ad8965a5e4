// `npm run build`, and `npm install` / `npm ci` (the root `prepare` script): compiles every published
// package to its dist/ (`tsc -b`, TypeScript project references) and builds the dashboard into the
// server's dist/dashboard. The workspace itself runs from src/ (the `@leadline/source` condition), so
// this is for the packs, the `leadline` command and the page `npm start` serves.
// `--dashboard` builds the page alone. Without the build tools (an install with --omit=dev) it says so
// and leaves the server to show its "not built" page; a failed build fails the install.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"

const root = new URL("..", import.meta.url).pathname
const dashboardOnly = process.argv.includes("--dashboard")

// A tool's own CLI, found from the folder of the package that uses it; absent when devDependencies were left out.
const cliOf = (from: string, name: string, bin: string): string | undefined => {
  try {
    const require = createRequire(`${root}${from}/package.json`)
    const cli = `${require.resolve(`${name}/package.json`).slice(0, -"package.json".length)}${bin}`
    return existsSync(cli) ? cli : undefined
  } catch {
    return undefined
  }
}

const run = (what: string, cli: string | undefined, args: ReadonlyArray<string>, cwd: string) => {
  if (cli === undefined) {
    console.log(`build: ${what} skipped, its build tool is not installed (production install?)`)
    return
  }
  const built = spawnSync(process.execPath, [cli, ...args], { cwd, stdio: "inherit" })
  if (built.status !== 0) {
    console.error(`build: ${what} failed (see above)`)
    process.exit(built.status ?? 1)
  }
}

if (!dashboardOnly) {
  run("the packages", cliOf(".", "typescript", "bin/tsc"), ["-b", "tsconfig.build.json"], root)
  console.log("build: the packages compiled into packages/*/dist")
  // A new embedded database is unpacked from these instead of running initdb and the migrations
  // (sql-adapter/src/PgliteTemplate.ts); after the compile, whose migration files they record.
  const template = spawnSync(
    process.execPath,
    ["--conditions=@leadline/source", "packages/sql-adapter/src/PgliteTemplateBuild.ts"],
    {
      cwd: root,
      stdio: "inherit"
    }
  )
  if (template.status !== 0) {
    console.error("build: the embedded database's templates failed (see above)")
    process.exit(template.status ?? 1)
  }
}
run("the dashboard", cliOf("packages/dashboard", "vite", "bin/vite.js"), ["build"], `${root}packages/dashboard`)
console.log("build: the dashboard built into packages/server/dist/dashboard, served at /dashboard")

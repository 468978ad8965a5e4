// `npm run check:packs` (and `.ci/run`): Leadline as others get it. Builds, packs every published
// package into a folder outside the repository, checks what each pack holds and imports, then
// installs the packs into fresh apps there and proves the three uses:
//   1. the server: `npm install <packs>` then `npx leadline serve` on the embedded database, with no
//      vitest, testkit or fast-check in its production dependency tree;
//   2. contract tests: examples/contract-test, installed from the packs, runs the testkit's contract
//      and security suites against that server;
//   3. embedding: examples/embed-core/src runs on Node 24 and on Node 22 (the `node@22` npm package)
//      with effect at its lowest supported version, and type-checks from the packs' declarations
//      under module nodenext, strict.
// Exits non-zero, saying which step failed. LEADLINE_PACK_CHECK_KEEP=1 keeps the folder.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), "leadline-packs-"))
const packs = join(work, "packs")
mkdirSync(packs)

/** The published packages, in dependency order. */
const PUBLISHED = [
  "core",
  "memory-adapter",
  "sql-adapter",
  "http-adapter",
  "webhook-worker",
  "whatsapp-adapter",
  "ai-adapter",
  "server",
  "testkit"
] as const

/** The lowest `effect` the packs support (their peer range's floor): the embedding runs on it. */
const EFFECT_FLOOR = "4.0.6"
const NODE_22 = "22"

let failures = 0
const step = (title: string) => console.log(`\npack-check: ${title}`)
const fail = (message: string) => {
  failures++
  console.error(`pack-check: FAILED: ${message}`)
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv = process.env) => {
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} (in ${cwd}) exited ${result.status}:\n${result.stdout}\n${result.stderr}`
    )
  }
  return result.stdout
}

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"))
const manifests = Object.fromEntries(
  PUBLISHED.map((name) => [name, readJson(join(root, "packages", name, "package.json"))])
)
const tarball = (name: string) => join(packs, `leadline-${name}-${manifests[name].version}.tgz`)

const fromPacks = (...names: ReadonlyArray<(typeof PUBLISHED)[number]>) =>
  Object.fromEntries(names.map((name) => [`@leadline/${name}`, `file:${tarball(name)}`]))

/** Every Leadline package pinned to its tarball, so npm never asks the registry for an unpublished one. */
const overrides = fromPacks(...PUBLISHED)

/** An app's package.json over the packs: its dependencies as `file:` tarballs, and the `overrides`. */
const appManifest = (
  name: string,
  dependencies: Record<string, string>,
  devDependencies: Record<string, string> = {}
) => ({
  name,
  private: true,
  type: "module",
  dependencies,
  devDependencies,
  overrides
})

const npmInstall = (dir: string, extra: ReadonlyArray<string> = []) =>
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...extra], dir)

// ---------------------------------------------------------------------------------------------
step("build and pack")
// The build writes only what git ignores (dist/): after it, git sees what it saw before.
const gitStatus = () => run("git", ["status", "--porcelain", "--untracked-files=all"], root)
const statusBefore = gitStatus()
run("npm", ["run", "build"], root)
const packed: Array<{ name: string; size: number; unpackedSize: number; files: Array<{ path: string }> }> = JSON.parse(
  run(
    "npm",
    [
      "pack",
      "--json",
      "--ignore-scripts",
      "--pack-destination",
      packs,
      ...PUBLISHED.flatMap((name) => ["-w", `@leadline/${name}`])
    ],
    root
  )
)
for (const pack of packed) {
  // The testkit's suites post Meta's documented webhook payloads: its pack holds them too.
  const allowed =
    pack.name === "@leadline/testkit"
      ? /^(dist\/.+|fixtures\/.+|README\.md|LICENSE|package\.json)$/
      : /^(dist\/.+|README\.md|LICENSE|package\.json)$/
  const outside = pack.files.map((file) => file.path).filter((path) => !allowed.test(path))
  if (outside.length > 0)
    fail(`${pack.name} packs files besides dist/, README.md, LICENSE, package.json: ${outside.join(", ")}`)
  for (const needed of ["README.md", "LICENSE", "package.json", "dist/index.js", "dist/index.d.ts"]) {
    if (!pack.files.some((file) => file.path === needed)) fail(`${pack.name}'s pack has no ${needed}`)
  }
  if (pack.files.some((file) => file.path.endsWith(".tsbuildinfo"))) fail(`${pack.name} packs its build info`)
  console.log(
    `  ${pack.name}: ${(pack.size / 1024).toFixed(1)} kB packed, ${(pack.unpackedSize / 1024).toFixed(1)} kB unpacked, ${pack.files.length} files`
  )
}
const seenBefore = new Set(statusBefore.split("\n"))
const leftBehind = gitStatus()
  .split("\n")
  .filter((line) => line !== "" && !seenBefore.has(line))
if (leftBehind.length > 0) fail(`the build and the packs left files git sees:\n${leftBehind.join("\n")}`)
if (
  !packed.find((pack) => pack.name === "@leadline/server")?.files.some((f) => f.path === "dist/dashboard/index.html")
) {
  fail("the server's pack holds no dashboard (dist/dashboard/index.html)")
}

// ---------------------------------------------------------------------------------------------
step("each pack names what its files import")
const builtins = new Set(builtinModules)
const packageOf = (specifier: string) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!
// Static imports, re-exports and `import("x")` in emitted JavaScript and declarations.
const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^import\s*["']([^"']+)["']/gm
const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]
  )
for (const name of PUBLISHED) {
  const manifest = manifests[name]
  const named = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})])
  const dist = join(root, "packages", name, "dist")
  const missing = new Set<string>()
  for (const file of filesUnder(dist).filter((path) => /\.(js|d\.ts)$/.test(path) && !path.includes("/dashboard/"))) {
    for (const match of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3]!
      if (specifier.startsWith(".") || specifier.startsWith("node:") || builtins.has(specifier)) continue
      const pkg = packageOf(specifier)
      if (pkg !== manifest.name && !named.has(pkg)) missing.add(`${pkg} (${file.slice(dist.length + 1)})`)
    }
  }
  if (missing.size > 0) fail(`${manifest.name} imports what its dependencies do not name: ${[...missing].join(", ")}`)
}

// ---------------------------------------------------------------------------------------------
step("the server from its pack: npm install, npm ls, npx leadline serve")
const serverApp = join(work, "server-app")
mkdirSync(serverApp)
writeFileSync(join(serverApp, "package.json"), JSON.stringify(appManifest("server-app", fromPacks("server")), null, 2))
npmInstall(serverApp)
const tree = run("npm", ["ls", "--omit=dev", "--all"], serverApp)
for (const forbidden of ["vitest", "@leadline/testkit", "fast-check"]) {
  if (new RegExp(`[\\s─]${forbidden.replace("/", "\\/")}@`).test(tree)) {
    fail(`the server's production dependency tree holds ${forbidden}`)
  }
}

const waitFor = (child: ChildProcess, log: () => string, pattern: RegExp, what: string, ms = 60_000) =>
  new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not happen in ${ms} ms:\n${log()}`)), ms)
    const check = () => {
      const match = pattern.exec(log())
      if (match !== null) {
        clearTimeout(timer)
        resolve(match)
      }
    }
    child.stdout?.on("data", check)
    child.stderr?.on("data", check)
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${what}: the process exited with ${code}:\n${log()}`))
    })
  })

const dataDir = join(work, "server-data")
// The WhatsApp tests sign Meta's webhooks: the server and the suites share the Meta app's settings.
const whatsapp = { WHATSAPP_APP_SECRET: "pack-check-app-secret", WHATSAPP_VERIFY_TOKEN: "pack-check-verify-token" }
let serverLog = ""
const server = spawn(join(serverApp, "node_modules", ".bin", "leadline"), ["serve"], {
  cwd: serverApp,
  env: {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    LEADLINE_DATA_DIR: dataDir,
    DATABASE_URL: "",
    LOG_LEVEL: "info",
    ...whatsapp,
    // The suites send thousands of requests from a handful of keys, past the default 1200 a minute.
    LEADLINE_RATE_LIMIT: "0",
    // The campaign tests queue 1,000 messages on one channel and expect the next campaign's first
    // send within seconds; at 20 sends a second per channel the sender serves that backlog first
    // (its claim is oldest-first across channels), so they run with the throttle off, as the
    // testkit's own test server does. The head-of-line wait is written down in docs/decisions.md.
    WHATSAPP_SEND_RATE: "0",
    // The security suite's webhook receiver listens on loopback.
    WEBHOOK_ALLOW_PRIVATE_URLS: "true"
  },
  stdio: ["ignore", "pipe", "pipe"]
})
server.stdout.on("data", (chunk: Buffer) => {
  serverLog += chunk.toString()
})
server.stderr.on("data", (chunk: Buffer) => {
  serverLog += chunk.toString()
})
const stopServer = () => {
  if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM")
}
process.on("exit", stopServer)

try {
  const [, port] = await waitFor(
    server,
    () => serverLog,
    /Listening on http:\/\/[^:]+:(\d+)/,
    "leadline serve listening"
  )
  const baseUrl = `http://127.0.0.1:${port}`
  const health = await fetch(`${baseUrl}/healthz`)
  if (health.status !== 200) fail(`GET /healthz answered ${health.status}`)
  const dashboard = await fetch(`${baseUrl}/dashboard/`)
  const page = await dashboard.text()
  if (dashboard.status !== 200 || !page.includes("<div id="))
    fail(`GET /dashboard/ answered ${dashboard.status}: ${page.slice(0, 200)}`)
  const adminToken = readFileSync(join(dataDir, "admin-token"), "utf8").trim()
  console.log(`  leadline serve answers on ${baseUrl} (the embedded database in ${dataDir}), the dashboard included`)

  // -------------------------------------------------------------------------------------------
  step("examples/contract-test from the packs, against that server")
  const contractApp = join(work, "contract-test")
  cpSync(join(root, "examples", "contract-test"), contractApp, {
    recursive: true,
    filter: (source) => !source.includes("node_modules")
  })
  const exampleManifest = readJson(join(contractApp, "package.json"))
  writeFileSync(
    join(contractApp, "package.json"),
    JSON.stringify(
      {
        ...exampleManifest,
        devDependencies: { ...exampleManifest.devDependencies, ...fromPacks("testkit") },
        overrides
      },
      null,
      2
    )
  )
  npmInstall(contractApp)
  // Its JSON report lands in the repository's copy of the example, where the CI's test summary counts it.
  const report = join(root, "examples", "contract-test", ".vitest-report.json")
  const contract = spawnSync("npm", ["test", "--", "--reporter=default", "--reporter=json", `--outputFile=${report}`], {
    cwd: contractApp,
    env: { ...process.env, ...whatsapp, LEADLINE_URL: baseUrl, LEADLINE_ADMIN_TOKEN: adminToken, CI: "true" },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })
  const summary = `${contract.stdout}\n${contract.stderr}`.split("\n").filter((line) => /Test Files|Tests /.test(line))
  console.log(summary.map((line) => `  ${line.trim()}`).join("\n"))
  if (contract.status !== 0) {
    console.error(contract.stdout.slice(-20_000), contract.stderr.slice(-5_000))
    fail("the contract-test example failed against the server from the packs")
  }
} catch (error) {
  fail(String(error))
} finally {
  stopServer()
}

// ---------------------------------------------------------------------------------------------
step(`embedding: examples/embed-core/src on Node 24 and Node ${NODE_22}, effect ${EFFECT_FLOOR}, tsc nodenext`)
const embedApp = join(work, "embed-app")
mkdirSync(embedApp)
cpSync(join(root, "examples", "embed-core", "src"), join(embedApp, "src"), { recursive: true })
const typescriptVersion = readJson(join(root, "node_modules", "typescript", "package.json")).version
writeFileSync(
  join(embedApp, "package.json"),
  JSON.stringify(
    appManifest(
      "embed-app",
      { ...fromPacks("core", "memory-adapter"), effect: EFFECT_FLOOR },
      {
        typescript: typescriptVersion,
        "@types/node": readJson(join(root, "node_modules", "@types", "node", "package.json")).version
      }
    ),
    null,
    2
  )
)
// A consumer's settings, not Leadline's: the declarations alone must satisfy them.
writeFileSync(
  join(embedApp, "tsconfig.json"),
  JSON.stringify(
    {
      compilerOptions: {
        module: "nodenext",
        target: "es2022",
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        types: ["node"]
      },
      include: ["src"]
    },
    null,
    2
  )
)
try {
  npmInstall(embedApp)
  const installedEffect = readJson(join(embedApp, "node_modules", "effect", "package.json")).version
  if (installedEffect !== EFFECT_FLOOR) fail(`the embedding installed effect ${installedEffect}, not ${EFFECT_FLOOR}`)
  run(join(embedApp, "node_modules", ".bin", "tsc"), ["-p", "."], embedApp)
  console.log("  tsc (module nodenext, target es2022, strict, skipLibCheck): no errors")
  const node22Dir = join(work, "node22")
  mkdirSync(node22Dir)
  writeFileSync(join(node22Dir, "package.json"), JSON.stringify({ private: true }))
  npmInstall(node22Dir, [`node@${NODE_22}`])
  const node22 = join(node22Dir, "node_modules", ".bin", "node")
  for (const node of [process.execPath, node22]) {
    const version = run(node, ["--version"], embedApp).trim()
    const output = run(node, ["src/main.ts"], embedApp)
    if (!output.includes("the reader sees 1 lead(s)") || !output.includes("PermissionDenied")) {
      fail(`examples/embed-core on Node ${version} printed:\n${output}`)
    } else console.log(`  node ${version} src/main.ts: ${output.trim().split("\n").join(" | ")}`)
  }
} catch (error) {
  fail(String(error))
}

if (process.env.LEADLINE_PACK_CHECK_KEEP === "1") console.log(`\npack-check: kept ${work}`)
else rmSync(work, { recursive: true, force: true })
console.log(failures === 0 ? "\npack-check: every check passed" : `\npack-check: ${failures} check(s) failed`)
process.exit(failures === 0 ? 0 : 1)

import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"

/**
 * `npm run bench:startup`: from launching the server to its first answer (`GET /healthz` 200),
 * as a user meets it: on a fresh embedded database, on one that exists, and on PostgreSQL
 * (fresh and migrated), from the built package (`dist/`, what `npx leadline` runs) and from the
 * sources (`npm start` in the repository); and the CLI's quick commands (`leadline --help`, `leadline keys list` against a running server).
 * BENCH_ROUNDS (3) launches each, medians reported. Writes bench/STARTUP.md.
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const root = join(import.meta.dirname, "..", "..")
const here = join(import.meta.dirname, "..")
const log = (line: string) => console.log(`[bench:startup] ${line}`)

const FORMS = {
  built: ["packages/server/dist/main.js"],
  sources: ["--conditions=@leadline/source", "packages/server/src/main.ts"]
} as const
type Form = keyof typeof FORMS

/** Milliseconds from spawn to the first 200 of /healthz, and the resident set after IDLE_SECONDS without a request. */
const launch = async (form: Form, env: Record<string, string>) => {
  const started = performance.now()
  const child = spawn(process.execPath, [...FORMS[form]], {
    cwd: root,
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      LEADLINE_ADMIN_TOKEN: Processes.ADMIN_TOKEN,
      LOG_LEVEL: "info",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const collect = (chunk: Buffer) => {
    output += chunk.toString()
  }
  child.stdout!.on("data", collect)
  child.stderr!.on("data", collect)
  const exited = new Promise<void>((done) => child.on("exit", () => done()))
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output}`)
      if (performance.now() - started > 60_000) throw new Error(`no answer in 60 s: ${output}`)
      // The port is known once the server says it listens; it answers 503 until its routes are attached.
      const port = /Listening on http:\/\/[^:]+:(\d+)/.exec(output)?.[1]
      const ok =
        port !== undefined &&
        (await fetch(`http://127.0.0.1:${port}/healthz`)
          .then((response) => response.status === 200)
          .catch(() => false))
      if (ok) break
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const ms = performance.now() - started
    await new Promise((resolve) => setTimeout(resolve, Processes.IDLE_SECONDS * 1000))
    return { ms, idleMB: Processes.residentMB(child.pid) }
  } finally {
    child.kill("SIGTERM")
    await exited
  }
}

const cli = async (form: Form, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const entry =
    form === "built"
      ? ["packages/server/dist/bin/leadline.js"]
      : ["--conditions=@leadline/source", "packages/server/src/bin/leadline.ts"]
  const started = performance.now()
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [...entry, ...args], {
      cwd: root,
      stdio: "ignore",
      env: { ...process.env, ...env }
    })
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`leadline ${args.join(" ")}: ${code}`))))
  })
  return performance.now() - started
}

const main = async () => {
  if (!existsSync(join(root, FORMS.built[0])))
    throw new Error("run `npm run build` first: the built server is measured too")
  const rows: Array<string> = []
  const record = (
    what: string,
    form: Form,
    launches: ReadonlyArray<{ readonly ms: number; readonly idleMB?: number }>,
    target: string,
    memoryTarget = ""
  ) => {
    const times = launches.map((launch) => launch.ms)
    const idle = launches.flatMap((launch) => (launch.idleMB === undefined ? [] : [launch.idleMB]))
    const memory = idle.length === 0 ? "" : `${Load.median(idle).toFixed(0)} MB`
    const line = `| ${what} | ${form} | ${Load.median(times).toFixed(0)} ms | ${times.map((t) => t.toFixed(0)).join(", ")} | ${target} | ${memory} | ${memoryTarget} |`
    log(line)
    rows.push(line)
  }
  for (const form of ["built", "sources"] as const) {
    const fresh: Array<{ ms: number; idleMB: number }> = []
    const existing: Array<{ ms: number; idleMB: number }> = []
    for (let round = 0; round < ROUNDS; round++) {
      const dataDir = mkdtempSync(join(tmpdir(), "leadline-startup-"))
      try {
        const env = { DATABASE_URL: "", LEADLINE_DATA_DIR: dataDir }
        fresh.push(await launch(form, env))
        existing.push(await launch(form, env))
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
    record("embedded database, fresh", form, fresh, "≤ 3,000 ms", "≤ 200 MB")
    record("embedded database, existing", form, existing, "≤ 1,000 ms", "≤ 200 MB")
    const pgFresh: Array<{ ms: number; idleMB: number }> = []
    const pgExisting: Array<{ ms: number; idleMB: number }> = []
    for (let round = 0; round < ROUNDS; round++) {
      const db = await Postgres.freshDatabase("startup")
      try {
        const env = { DATABASE_URL: db.url, LEADLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "leadline-startup-")) }
        pgFresh.push(await launch(form, env))
        pgExisting.push(await launch(form, env))
      } finally {
        await db.drop()
      }
    }
    record("PostgreSQL, fresh database", form, pgFresh, "")
    record("PostgreSQL, migrated", form, pgExisting, "≤ 1,000 ms")
    const help: Array<{ ms: number }> = []
    for (let round = 0; round < ROUNDS; round++) help.push({ ms: await cli(form, ["--help"]) })
    record("`leadline --help`", form, help, "≤ 1,000 ms")
    // A quick command that asks a running server (on PostgreSQL): the CLI's own start-up and one request.
    const db = await Postgres.freshDatabase("startup")
    const server = await Processes.leadline(db.url)
    try {
      const created = await fetch(`${server.url}/admin/v1/accounts`, {
        method: "POST",
        headers: { authorization: `Bearer ${Processes.ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Startup" })
      })
      const account = ((await created.json()) as { account_id: string }).account_id
      const list: Array<{ ms: number }> = []
      for (let round = 0; round < ROUNDS; round++) {
        list.push({
          ms: await cli(form, ["keys", "list", "--url", server.url, "--account", account], {
            LEADLINE_ADMIN_TOKEN: Processes.ADMIN_TOKEN
          })
        })
      }
      record("`leadline keys list` (a running server)", form, list, "≤ 1,000 ms")
    } finally {
      await server.stop()
      await db.drop()
    }
  }
  writeFileSync(
    join(here, "STARTUP.md"),
    `# Start-up

\`npm run bench:startup -w @leadline/bench\` on ${new Date().toISOString().slice(0, 10)}: ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, Node ${process.version}.
From launching the process to the first 200 of \`GET /healthz\` (the database opened and migrated, every route attached),
${ROUNDS} launches each, the median and every launch; then, ${Processes.IDLE_SECONDS} s later without a request, the server's
resident set (VmRSS, the median of the launches). "built" is the published package's \`dist/\` (what \`npx leadline\`
runs); "sources" is \`npm start\` in the repository (Node strips the TypeScript of every module as it loads it).

| what | form | median | launches | target | idle resident set | target |
|---|---|---|---|---|---|---|
${rows.join("\n")}
`
  )
  log("wrote bench/STARTUP.md")
}

await main()

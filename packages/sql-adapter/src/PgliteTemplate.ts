import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, extname, join, normalize } from "node:path"
import { gunzipSync } from "node:zlib"
import { fileURLToPath } from "node:url"

/**
 * Embedded databases made once when the package is built and copied into every new data
 * directory, instead of running PostgreSQL's `initdb` and then every migration on each first start.
 *
 * `initdb` was most of a first start on the embedded database (about 2 of its 3.4 s), and the
 * migrations that followed grew PostgreSQL's WebAssembly memory by about 100 MB, which it never
 * gives back. Two templates, tied to the PGlite version that made them (under another version, or
 * where the build did not make them, a new database is initialised as before):
 *
 * - `initdb`: what `initdb` makes and nothing of Leadline's, for a client without migrations;
 * - `migrated`: the same with every migration applied, for the server. It records each
 *   migration it holds with a hash of its file, for the sources and for the built package: it is
 *   used only where the running code's migrations up to its last one are exactly those files, so
 *   the migrator applies the newer ones as on any start; after a migration it holds was edited
 *   (before the next build), a new database starts from `initdb` and runs them all.
 *
 * The build makes them (`PgliteTemplateBuild.ts`). docs/performance.md, "Start-up" and "Memory".
 */

export type Kind = "initdb" | "migrated"

export const pgliteVersion = (): string | undefined => {
  try {
    const entry = fileURLToPath(import.meta.resolve("@electric-sql/pglite"))
    // dist/index.js → the package's own package.json
    const manifest = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")) as {
      readonly name?: string
      readonly version?: string
    }
    return manifest.name === "@electric-sql/pglite" ? manifest.version : undefined
  } catch {
    return undefined
  }
}

/** Where a template lives: the package's `dist/`, found from `src/` and from `dist/` alike. */
export const file = (version: string | undefined = pgliteVersion(), kind: Kind = "initdb"): string | undefined =>
  version === undefined
    ? undefined
    : fileURLToPath(
        new URL(`../dist/pglite-template-${version}${kind === "migrated" ? "-migrated" : ""}.tar.gz`, import.meta.url)
      )

/** The migrated template's record of the migrations it holds, beside it. */
export const manifestFile = (version: string | undefined = pgliteVersion()): string | undefined =>
  version === undefined
    ? undefined
    : fileURLToPath(new URL(`../dist/pglite-template-${version}-migrated.json`, import.meta.url))

/** `src` when this module runs from the sources (TypeScript), `dist` from the built package. */
export type Form = "src" | "dist"
const runningForm = (): Form => (extname(fileURLToPath(import.meta.url)) === ".ts" ? "src" : "dist")

/** Each migration's key (its file's name, `NNNN_name`) and a hash of that file. */
export type Hashes = Readonly<Record<string, string>>

export interface Manifest {
  readonly pglite: string
  readonly migrations: Partial<Record<Form, Hashes>>
}

/**
 * The migration files of one form of this package (`src/**\/migrations/*.ts` or `dist/**\/migrations/*.js`,
 * one folder deep as the slices keep them), by key, with their contents' hashes.
 */
export const migrationHashes = (form: Form = runningForm()): Hashes => {
  const root = fileURLToPath(new URL(`../${form}/`, import.meta.url))
  const extension = form === "src" ? ".ts" : ".js"
  const folders = [join(root, "migrations")]
  if (existsSync(root)) {
    for (const entry of readdirSync(root, { withFileTypes: true }))
      if (entry.isDirectory()) folders.push(join(root, entry.name, "migrations"))
  }
  const hashes: Record<string, string> = {}
  for (const folder of folders) {
    if (!existsSync(folder)) continue
    for (const name of readdirSync(folder)) {
      if (!name.endsWith(extension) || name.endsWith(`.d${extension}`)) continue
      const key = name.slice(0, -extension.length)
      hashes[key] = createHash("sha256")
        .update(readFileSync(join(folder, name)))
        .digest("hex")
    }
  }
  // In key order, so the build's record reads the same from one build to the next.
  return Object.fromEntries(Object.entries(hashes).sort(([a], [b]) => (a < b ? -1 : 1)))
}

const idOf = (key: string) => Number(/^(\d+)_/.exec(key)?.[1] ?? Number.NaN)

/**
 * Whether a template that recorded `held` can start a database for code whose migrations are
 * `current`: every migration it holds is unchanged, and the code has none numbered below its last
 * one that it lacks (the migrator would refuse to start). Newer ones are applied on start.
 */
export const holds = (held: Hashes, current: Hashes): boolean => {
  const keys = Object.keys(held)
  if (keys.length === 0) return false
  const last = Math.max(...keys.map(idOf))
  if (!Number.isFinite(last)) return false
  return (
    keys.every((key) => current[key] === held[key]) &&
    Object.keys(current).every((key) => !(idOf(key) <= last) || held[key] !== undefined)
  )
}

const readManifest = (): Manifest | undefined => {
  const path = manifestFile()
  if (path === undefined || !existsSync(path)) return undefined
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Manifest
  } catch {
    return undefined
  }
}

/** The migrated template, when it holds what this code's migrations are (checked once per process). */
let migratedUsable: boolean | undefined
const migratedHolds = (): boolean => {
  if (migratedUsable === undefined) {
    const recorded = readManifest()?.migrations[runningForm()]
    migratedUsable = recorded !== undefined && holds(recorded, migrationHashes())
  }
  return migratedUsable
}

// Read once per process for in-memory databases (a test run opens many); a server opens one
// database on disk and does not keep the file.
const cached = new Map<Kind, Blob | null>()
const load = (kind: Kind, keep: boolean): Blob | undefined => {
  const known = cached.get(kind)
  if (known !== undefined) return known ?? undefined
  const path = file(undefined, kind)
  const blob = path !== undefined && existsSync(path) ? new Blob([readFileSync(path)]) : null
  if (keep || blob === null) cached.set(kind, blob)
  return blob ?? undefined
}

const chosen = (kind: Kind): Kind => (kind === "migrated" && migratedHolds() ? "migrated" : "initdb")

/**
 * The template to start a new database from, or `undefined` for a database that exists or to let
 * PGlite run `initdb`. `migrated` asks for the migrated one and falls back to `initdb`'s.
 */
export const forNewDatabase = (pgliteDirectory: string | undefined, kind: Kind = "initdb"): Blob | undefined => {
  if (pgliteDirectory !== undefined && existsSync(join(pgliteDirectory, "PG_VERSION"))) return undefined
  const keep = pgliteDirectory === undefined
  const which = chosen(kind)
  return load(which, keep) ?? (which === "initdb" ? undefined : load("initdb", keep))
}

/**
 * Makes a new database directory on disk from a template, where there is none yet (nor anything
 * else in its place); returns whether it did. PGlite can load a template itself, but its unpacking
 * goes through many small copies that left about 60 MB of the C heap resident for good; this writes
 * each file from one decompressed buffer, into a sibling directory renamed into place, so a start
 * stopped halfway never leaves a half-written database behind.
 */
export const unpack = (pgliteDirectory: string, kind: Kind = "initdb"): boolean => {
  if (existsSync(pgliteDirectory) && readdirSync(pgliteDirectory).length > 0) return false
  const which = chosen(kind)
  const path = [file(undefined, which), file(undefined, "initdb")].find(
    (candidate) => candidate !== undefined && existsSync(candidate)
  )
  if (path === undefined) return false
  const gzip = readFileSync(path)
  // Inflated in one piece of its known size (gzip ends with it): in the default 16 KB pieces, the
  // pieces left tens of megabytes of the C heap resident after they were joined and freed.
  const tar = gunzipSync(gzip, { chunkSize: Math.max(64 * 1024, gzip.readUInt32LE(gzip.length - 4)) })
  const staging = `${pgliteDirectory}.unpacking-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  // ustar: a 512-byte header per entry (name, octal size, type), its data padded to 512 bytes.
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512)
    if (header.every((byte) => byte === 0)) break
    const field = (start: number, length: number) => {
      const raw = header.subarray(start, start + length)
      const end = raw.indexOf(0)
      return raw.subarray(0, end === -1 ? length : end).toString("utf8")
    }
    const name = [field(345, 155), field(0, 100)].filter((part) => part !== "").join("/")
    const size = Number.parseInt(field(124, 12).trim() || "0", 8)
    const relative = normalize(name).replace(/^[/\\]+/, "")
    if (relative === "" || relative.split(/[/\\]/).includes("..")) throw new Error(`template entry "${name}"`)
    const target = join(staging, relative)
    const type = header[156]
    if (type === 0x35 /* "5", a directory */) mkdirSync(target, { recursive: true })
    else if (type === 0x30 /* "0" */ || type === 0) {
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, tar.subarray(offset + 512, offset + 512 + size))
    }
    offset += 512 + Math.ceil(size / 512) * 512
  }
  if (existsSync(pgliteDirectory)) rmSync(pgliteDirectory, { recursive: true })
  renameSync(staging, pgliteDirectory)
  return true
}

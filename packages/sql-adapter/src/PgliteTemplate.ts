import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { PGlite } from "@electric-sql/pglite"

/**
 * A freshly initialised embedded database, made once when the package is built and copied
 * into every new data directory, instead of running PostgreSQL's `initdb` on each first start.
 *
 * `initdb` was most of a first start on the embedded database (about 2 of its 3.4 s);
 * unpacking the template takes about half a second. It holds what `initdb` makes and nothing
 * of Leadline's (the migrations run as on any start), and it is tied to the PGlite version
 * that made it: under another version, or where the build did not make it, a new database is
 * initialised as before (docs/performance.md, "Start-up").
 */

const pgliteVersion = (): string | undefined => {
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

/** Where the template lives: the package's `dist/`, found from `src/` and from `dist/` alike. */
export const file = (version: string | undefined = pgliteVersion()): string | undefined =>
  version === undefined
    ? undefined
    : fileURLToPath(new URL(`../dist/pglite-template-${version}.tar.gz`, import.meta.url))

// Read once per process: a test run opens many in-memory databases from it.
let template: Blob | null | undefined
const load = (): Blob | undefined => {
  if (template === undefined) {
    const path = file()
    template = path !== undefined && existsSync(path) ? new Blob([readFileSync(path)]) : null
  }
  return template ?? undefined
}

/** The template to start a new database from, or `undefined` to let PGlite run `initdb`. */
export const forNewDatabase = (pgliteDirectory: string | undefined): Blob | undefined =>
  pgliteDirectory !== undefined && existsSync(join(pgliteDirectory, "PG_VERSION")) ? undefined : load()

/** Makes the template (the build runs this module). */
export const make = async (): Promise<string> => {
  const path = file()
  if (path === undefined) throw new Error("PGlite's version could not be read")
  const db = await PGlite.create("memory://")
  try {
    const tarball = await db.dumpDataDir("gzip")
    writeFileSync(path, Buffer.from(await tarball.arrayBuffer()))
    return path
  } finally {
    await db.close()
  }
}

if (import.meta.main) console.log(`build: the embedded database's template written to ${await make()}`)

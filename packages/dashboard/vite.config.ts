import { builtinModules } from "node:module"
import { gzipSync } from "node:zlib"
import { defaultClientConditions, defineConfig, type Plugin } from "vite"

/**
 * The page must run in any browser: a `node:` module (or a bare Node built-in) reaching the
 * bundle means server code leaked into the API definitions it imports, so the build fails
 * instead of externalizing it with a warning.
 */
const noNodeModules = (): Plugin => {
  const builtins = new Set(builtinModules)
  return {
    name: "leadline:no-node-modules",
    enforce: "pre",
    resolveId(source, importer) {
      if (source.startsWith("node:") || builtins.has(source))
        this.error(
          `${source} is a Node module, imported by ${importer ?? "the entry"}: keep server code out of the dashboard`
        )
      return null
    }
  }
}

/**
 * Gzipped JavaScript a page load fetches above this fails the build: the page should stay small
 * (it was ~115 KB when this was set at 160 KB). Raised to 168 KB when WhatsApp's templates, media,
 * interactive messages and opt-outs (issue 32) added their routes: the typed client carries every
 * route's schemas (163 KB then), to 172 KB when outbound files and the leads list's search did
 * (168.5 KB then), and to 180 KB when the leads' imports, exports and bulk changes added five
 * (175.8 KB then). Since issue 34's inbox each page is its own chunk, fetched when it is opened, so
 * the budget is what one load costs: the entry with the chunks it imports, plus the heaviest page
 * with its own (the whole bundle was 188.9 KB then, every page loaded). Each page then took a typed
 * client of only the groups it calls (`routes` in src/api.ts), not of the whole API: a page load
 * went from 180.0 KB to at most 173.0 KB (Webhooks and Analytics, which need core's event and
 * metric catalogues, and with them every slice), the inbox's from 180.0 to 97.1 KB (97.6 KB with
 * assigning to teammates, 98.2 KB with older messages).
 */
const BUDGET_GZIP_BYTES = 180 * 1024

const bundleBudget = (): Plugin => ({
  name: "leadline:bundle-budget",
  apply: "build",
  generateBundle(_options, bundle) {
    const chunks = new Map<
      string,
      { code: string; imports: ReadonlyArray<string>; isEntry: boolean; isDynamicEntry: boolean }
    >()
    for (const file of Object.values(bundle)) if (file.type === "chunk") chunks.set(file.fileName, file)
    const gzipOf = new Map([...chunks].map(([name, chunk]) => [name, gzipSync(chunk.code).length]))
    // A chunk and every chunk it imports statically: what the browser fetches to run it.
    const closure = (name: string, into = new Set<string>()) => {
      if (into.has(name)) return into
      into.add(name)
      for (const imported of chunks.get(name)?.imports ?? []) closure(imported, into)
      return into
    }
    const sum = (names: Iterable<string>) => {
      let total = 0
      for (const name of names) total += gzipOf.get(name) ?? 0
      return total
    }
    const entry = new Set<string>()
    for (const [name, chunk] of chunks) if (chunk.isEntry) closure(name, entry)
    let heaviest = { page: "(none)", gzip: sum(entry) }
    for (const [name, chunk] of chunks) {
      if (!chunk.isDynamicEntry) continue
      const gzip = sum(closure(name, new Set(entry)))
      if (gzip > heaviest.gzip) heaviest = { page: name, gzip }
    }
    const raw = [...chunks.values()].reduce((total, chunk) => total + chunk.code.length, 0)
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
    this.info(
      `dashboard JavaScript: ${kb(raw)}, ${kb(sum(chunks.keys()))} gzip in all; a page load at most ${kb(heaviest.gzip)} gzip (${heaviest.page}; budget ${kb(BUDGET_GZIP_BYTES)})`
    )
    if (heaviest.gzip > BUDGET_GZIP_BYTES)
      this.error(
        `loading ${heaviest.page} fetches ${kb(heaviest.gzip)} of JavaScript gzip, over the dashboard's budget`
      )
  }
})

export default defineConfig({
  base: "/dashboard/",
  plugins: [noNodeModules(), bundleBudget()],
  // The workspace's packages from their sources: the page builds without building them first.
  resolve: { conditions: ["@leadline/source", ...defaultClientConditions] },
  // The budget above is the size check that matters; Vite's own 500 KB warning is about raw size.
  // No module preloading: a page's chunk depends only on the entry, already loaded, so there is
  // nothing to preload, and its polyfill cost a page load about 250 bytes gzip.
  // Into the server package, which serves it and packs it.
  build: {
    outDir: "../server/dist/dashboard",
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 1024,
    modulePreload: false
  },
  logLevel: "info"
})

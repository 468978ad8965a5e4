import { isNodeBuiltin, type Manifest, packageOf, type SourceFile } from "./Imports.ts"

export const CORE = "@leadline/core"
export const TESTKIT = "@leadline/testkit"
export const SERVER = "@leadline/server"
/** What the server's code may not import: it is deployed, and test tooling has no place in production. */
export const TEST_TOOLING: ReadonlyArray<string> = [TESTKIT, "vitest", "@effect/vitest", "fast-check"]
export const ADAPTERS: ReadonlyArray<string> = [
  "@leadline/ai-adapter",
  "@leadline/sql-adapter",
  "@leadline/http-adapter",
  "@leadline/memory-adapter",
  "@leadline/webhook-worker",
  "@leadline/whatsapp-adapter"
]
/** Runtimes and drivers: what makes an adapter an adapter. */
export const PLATFORM: ReadonlyArray<string> = [
  "@effect/platform-node",
  "@effect/platform-node-shared",
  "@effect/sql-pg",
  "@electric-sql/pglite",
  "pg"
]
/**
 * The `node:` modules core/src may import: none. webhooks/Signature and
 * internal/random use node:crypto when present through
 * `process.getBuiltinModule`, with Web Crypto as the fallback, which is no import.
 */
export const CORE_NODE_MODULES: ReadonlyArray<string> = []

export interface Violation {
  readonly path: string
  readonly specifier: string
  readonly rule: string
}

export const describeViolations = (violations: ReadonlyArray<Violation>): string =>
  violations.map((v) => `${v.path} imports "${v.specifier}": ${v.rule}`).join("\n")

/** `@leadline/core/internal/random`, `@leadline/http-adapter/leads/internal/x`: a package's internal/ modules. */
const isInternal = (specifier: string): boolean => {
  const pkg = packageOf(specifier)
  if (pkg === undefined || !pkg.startsWith("@leadline/")) return false
  return specifier.slice(pkg.length).split("/").includes("internal")
}

/** The arrows of docs/design.md ("The house"): what each file may not import. */
export const arrowViolations = (files: ReadonlyArray<SourceFile>): ReadonlyArray<Violation> =>
  files.flatMap((file) =>
    file.imports.flatMap((specifier): ReadonlyArray<Violation> => {
      const pkg = packageOf(specifier)
      const found: Array<string> = []
      if (file.owner === CORE && pkg !== undefined && [...ADAPTERS, TESTKIT, ...PLATFORM].includes(pkg)) {
        found.push("core imports no adapter, testkit, runtime or driver")
      }
      if (
        file.owner === CORE &&
        file.area === "src" &&
        isNodeBuiltin(specifier) &&
        !CORE_NODE_MODULES.includes(specifier)
      ) {
        found.push("core/src imports no node: module")
      }
      if (
        ADAPTERS.includes(file.owner) &&
        pkg !== undefined &&
        pkg !== file.owner &&
        [...ADAPTERS, TESTKIT].includes(pkg)
      ) {
        found.push("an adapter imports core only, never another adapter or the testkit")
      }
      if ((pkg === SERVER && file.owner === CORE) || (pkg === SERVER && ADAPTERS.includes(file.owner))) {
        found.push("core and the adapters never import the server (the composition root)")
      }
      if (file.owner === SERVER && file.area === "src" && pkg !== undefined && TEST_TOOLING.includes(pkg)) {
        found.push("the server's code imports no test tooling")
      }
      if (isInternal(specifier)) {
        found.push("a package's internal/ modules are closed to other packages (its exports map them to null)")
      }
      return found.map((rule) => ({ path: file.path, specifier, rule }))
    })
  )

const names = (record: Record<string, string> | undefined): ReadonlyArray<string> => Object.keys(record ?? {})

/**
 * What a workspace imports but its package.json does not name. Code that runs
 * (src, bin) needs `dependencies`; tests and configs may also use
 * `devDependencies` or the root's tooling (vitest, typescript).
 */
export const missingDependencies = (
  manifest: Manifest,
  files: ReadonlyArray<SourceFile>,
  rootTooling: ReadonlyArray<string>
): ReadonlyArray<Violation> => {
  const runtime = new Set([...names(manifest.dependencies), ...names(manifest.peerDependencies)])
  const anywhere = new Set([...runtime, ...names(manifest.devDependencies), ...rootTooling])
  return files.flatMap((file) =>
    file.imports.flatMap((specifier): ReadonlyArray<Violation> => {
      const pkg = packageOf(specifier)
      if (pkg === undefined || pkg === manifest.name) return []
      if (file.area === "src" || file.area === "bin") {
        return runtime.has(pkg)
          ? []
          : [{ path: file.path, specifier, rule: `${manifest.name} must name ${pkg} in dependencies` }]
      }
      return anywhere.has(pkg)
        ? []
        : [{ path: file.path, specifier, rule: `${manifest.name} must name ${pkg} in dependencies or devDependencies` }]
    })
  )
}

/** The condition under which a package's `exports` give its sources: the workspace runs from src/ with no build. */
export const SOURCE_CONDITION = "@leadline/source"

/**
 * What is wrong with a package's `exports`: `./internal/*` must be closed (null, which Node
 * prefers over `./*` as the longer match); a conditional target gives the sources first (under
 * `@leadline/source`, in src/), then `types` and `default` from dist/ (what a pack holds); every
 * fixed source or plain target must exist (`exists` takes a path relative to the package; dist/
 * exists only after a build, so it is not asked).
 */
export const exportProblems = (manifest: Manifest, exists: (path: string) => boolean): ReadonlyArray<string> => {
  const exports = manifest.exports ?? {}
  const problems: Array<string> = []
  if (exports["./internal/*"] !== null) problems.push(`${manifest.name}: exports must map "./internal/*" to null`)
  const mustExist = (key: string, target: string) => {
    if (!target.includes("*") && !exists(target)) {
      problems.push(`${manifest.name}: exports "${key}" points at ${target}, which does not exist`)
    }
  }
  for (const [key, target] of Object.entries(exports)) {
    if (typeof target === "string") mustExist(key, target)
    if (target === null || typeof target !== "object") continue
    const conditions = target as Record<string, unknown>
    const order = Object.keys(conditions).join(", ")
    if (order !== `${SOURCE_CONDITION}, types, default`) {
      problems.push(
        `${manifest.name}: exports "${key}" must list ${SOURCE_CONDITION}, types, default in that order (has ${order})`
      )
      continue
    }
    const [source, types, fallback] = [conditions[SOURCE_CONDITION], conditions.types, conditions.default]
    if (typeof source !== "string" || !source.startsWith("./src/")) {
      problems.push(`${manifest.name}: exports "${key}" must give its sources from ./src/ under ${SOURCE_CONDITION}`)
    } else mustExist(key, source)
    if (typeof types !== "string" || !types.startsWith("./dist/") || !types.endsWith(".d.ts")) {
      problems.push(`${manifest.name}: exports "${key}" must give types from ./dist/*.d.ts`)
    }
    if (typeof fallback !== "string" || !fallback.startsWith("./dist/") || !fallback.endsWith(".js")) {
      problems.push(`${manifest.name}: exports "${key}" must give its default from ./dist/*.js`)
    }
  }
  return problems
}

import { existsSync, readdirSync, readFileSync } from "node:fs"
import { isBuiltin } from "node:module"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

/** The repository root, from this file's place in it (packages/testkit/test/architecture). */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..")

export interface Manifest {
  readonly name: string
  readonly dependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly exports?: Record<string, string | null | Readonly<Record<string, string>>>
  readonly workspaces?: ReadonlyArray<string>
}

export interface Workspace {
  /** Relative to the root, with forward slashes: `packages/core`. */
  readonly dir: string
  readonly manifest: Manifest
}

export interface SourceFile {
  /** Relative to the root, with forward slashes: `packages/core/src/Errors.ts`. */
  readonly path: string
  /** The name of the workspace that holds the file: `@leadline/core`. */
  readonly owner: string
  /** The first step of the path inside the workspace: `src`, `test`, `bin`, or a file such as `vitest.config.ts`. */
  readonly area: string
  /** What the file imports, as written: `effect`, `./Leads.ts`, `node:fs`. */
  readonly imports: ReadonlyArray<string>
}

const posix = (path: string) => path.split(sep).join("/")

export const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"))

/** The root's `workspaces` globs, expanded: only `dir/*` and plain folders are used here. */
export const workspaces = (): ReadonlyArray<Workspace> =>
  (readManifest(".").workspaces ?? [])
    .flatMap((pattern) =>
      pattern.endsWith("/*")
        ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
            .filter((entry) => entry.isDirectory())
            .map((entry) => `${pattern.slice(0, -2)}/${entry.name}`)
        : [pattern]
    )
    .filter((dir) => existsSync(join(root, dir, "package.json")))
    .map((dir) => ({ dir, manifest: readManifest(dir) }))

const tsFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) return []
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return tsFiles(path)
    return entry.name.endsWith(".ts") ? [path] : []
  })

/**
 * Every module specifier a file names: static imports and re-exports (type-only
 * ones too), `import("x")` and `typeof import("x")`, `import x = require("x")`
 * and `require("x")`. A parse, not a pattern, so text in strings and comments
 * is never taken for an import.
 */
export const importsOf = (text: string, fileName = "file.ts"): ReadonlyArray<string> => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const found: Array<string> = []
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text)
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push(node.moduleReference.expression.text)
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === "require")) &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text)
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push(node.argument.literal.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** Every `.ts` file of a workspace (src, test, bin and the rest; never node_modules), with its imports. */
export const sourceFiles = (workspace: Workspace): ReadonlyArray<SourceFile> =>
  tsFiles(join(root, workspace.dir)).map((path) => ({
    path: posix(relative(root, path)),
    owner: workspace.manifest.name,
    area: posix(relative(join(root, workspace.dir), path)).split("/")[0]!,
    imports: importsOf(readFileSync(path, "utf8"), path)
  }))

export const isRelative = (specifier: string): boolean =>
  specifier.startsWith("./") || specifier.startsWith("../") || specifier.startsWith("/") || specifier === "."

export const isNodeBuiltin = (specifier: string): boolean => specifier.startsWith("node:") || isBuiltin(specifier)

/**
 * The package a bare specifier names: `@effect/sql-pg/PgClient` -> `@effect/sql-pg`,
 * `effect/http` -> `effect`; none for a relative path, a builtin or a `#` subpath import.
 */
export const packageOf = (specifier: string): string | undefined => {
  if (isRelative(specifier) || isNodeBuiltin(specifier) || specifier.startsWith("#")) return undefined
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]
}

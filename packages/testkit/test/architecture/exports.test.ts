import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { root, workspaces } from "./Imports.ts"
import { exportProblems, SOURCE_CONDITION } from "./Rules.ts"

const libraries = () => workspaces().filter((w) => w.dir.startsWith("packages/"))

const require = createRequire(import.meta.url)

/** Where Node (this process's) resolves `specifier` from the repository root under `conditions`, as an import. */
const resolvedWith = (conditions: ReadonlyArray<string>, specifier: string): string =>
  spawnSync(
    process.execPath,
    [
      ...conditions.map((condition) => `--conditions=${condition}`),
      "--input-type=module",
      "-e",
      `console.log(import.meta.resolve(${JSON.stringify(specifier)}))`
    ],
    { cwd: root, encoding: "utf8" }
  ).stdout.trim()

const resolveError = (specifier: string): string | undefined => {
  try {
    require.resolve(specifier)
    return undefined
  } catch (error) {
    return (error as { code?: string }).code
  }
}

describe("package exports", () => {
  it("reports an open internal/ and a target that does not exist", () => {
    const open = { name: "@leadline/open", exports: { ".": "./src/index.ts", "./*": "./src/*.ts" } }
    expect(exportProblems(open, (path) => path !== "./src/index.ts")).toEqual([
      `@leadline/open: exports must map "./internal/*" to null`,
      `@leadline/open: exports "." points at ./src/index.ts, which does not exist`
    ])
    const closed = { ...open, exports: { ...open.exports, "./internal/*": null } }
    expect(exportProblems(closed, () => true)).toEqual([])
  })

  it("every package closes internal/ and points only at files that exist", () => {
    const all = libraries()
    expect(all.map((w) => w.manifest.name)).toContain("@leadline/testkit")
    const problems = all.flatMap((w) => exportProblems(w.manifest, (path) => existsSync(join(root, w.dir, path))))
    expect(problems.join("\n")).toBe("")
  })

  it("Node refuses internal/ and still resolves the public modules", () => {
    for (const { manifest } of libraries()) {
      expect(resolveError(`${manifest.name}/internal/anything`), manifest.name).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED")
    }
    expect(resolveError("@leadline/sql-adapter/internal/store")).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED")
  })

  it("gives the workspace the sources and everyone else dist/", () => {
    const conditional = {
      name: "@leadline/built",
      exports: {
        ".": { [SOURCE_CONDITION]: "./src/index.ts", types: "./dist/index.d.ts", default: "./dist/index.js" },
        "./*": { default: "./src/*.ts" },
        "./internal/*": null
      }
    }
    expect(exportProblems(conditional, () => true)).toEqual([
      `@leadline/built: exports "./*" must list ${SOURCE_CONDITION}, types, default in that order (has default)`
    ])
    const source = (specifier: string) => resolvedWith([SOURCE_CONDITION], specifier)
    expect(source("@leadline/sql-adapter/StoreErrors")).toBe(`file://${root}/packages/sql-adapter/src/StoreErrors.ts`)
    expect(source("@leadline/testkit")).toBe(`file://${root}/packages/testkit/src/index.ts`)
    expect(resolvedWith([], "@leadline/testkit")).toBe(`file://${root}/packages/testkit/dist/index.js`)
  })
})

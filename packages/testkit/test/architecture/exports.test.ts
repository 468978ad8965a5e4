import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { root, workspaces } from "./Imports.ts"
import { exportProblems } from "./Rules.ts"

const libraries = () => workspaces().filter((w) => w.dir.startsWith("packages/"))

const require = createRequire(import.meta.url)

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
    expect(require.resolve("@leadline/sql-adapter/StoreErrors")).toBe(
      join(root, "packages/sql-adapter/src/StoreErrors.ts")
    )
    expect(require.resolve("@leadline/testkit")).toBe(join(root, "packages/testkit/src/index.ts"))
  })
})

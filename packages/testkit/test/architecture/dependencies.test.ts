import { describe, expect, it } from "vitest"
import { importsOf, readManifest, type SourceFile, sourceFiles, workspaces } from "./Imports.ts"
import { describeViolations, missingDependencies } from "./Rules.ts"

const file = (path: string, text: string): SourceFile => ({
  path,
  owner: "@leadline/app",
  area: path.split("/")[2]!,
  imports: importsOf(text)
})

const manifest = {
  name: "@leadline/app",
  dependencies: { effect: "4.0.6", "@leadline/core": "0.1.0" },
  devDependencies: { "fast-check": "4.10.2" }
}

const missing = (example: SourceFile) =>
  missingDependencies(manifest, [example], ["vitest", "@effect/vitest"]).map((v) => v.rule)

describe("each package names what it imports", () => {
  it("reports a workspace package or npm package the manifest does not name", () => {
    expect(
      missing(file("examples/app/src/main.ts", `import * as Worker from "@leadline/webhook-worker/Worker"`))
    ).toEqual(["@leadline/app must name @leadline/webhook-worker in dependencies"])
    expect(missing(file("examples/app/test/x.test.ts", `import { Webhook } from "standardwebhooks"`))).toEqual([
      "@leadline/app must name standardwebhooks in dependencies or devDependencies"
    ])
  })

  it("asks dependencies, not devDependencies, of the code that runs (src, bin)", () => {
    expect(missing(file("examples/app/src/Fuzz.ts", `import * as fc from "fast-check"`))).toEqual([
      "@leadline/app must name fast-check in dependencies"
    ])
    expect(missing(file("examples/app/bin/app.ts", `import { it } from "vitest"`))).toEqual([
      "@leadline/app must name vitest in dependencies"
    ])
    expect(missing(file("examples/app/test/Fuzz.test.ts", `import * as fc from "fast-check"`))).toEqual([])
  })

  it("needs nothing named for builtins, relative paths, itself, or the root's tooling in tests", () => {
    const text = [
      `import { readFileSync } from "node:fs"`,
      `import * as Leads from "./Leads.ts"`,
      `import { Effect } from "effect"`,
      `import * as Errors from "@leadline/core/Errors"`,
      `import * as App from "@leadline/app/App"`,
      `import { it } from "@effect/vitest"`
    ].join("\n")
    expect(missing(file("examples/app/test/App.test.ts", text))).toEqual([])
  })

  it("holds in every workspace", () => {
    const all = workspaces()
    const rootTooling = Object.keys(readManifest(".").devDependencies ?? {})
    // The scan must reach the examples too, not only packages/.
    expect(all.map((w) => w.dir)).toContain("examples/reference-server")
    const violations = all.flatMap((workspace) =>
      missingDependencies(workspace.manifest, sourceFiles(workspace), rootTooling)
    )
    expect(describeViolations(violations), "imports whose package is not named in the workspace's package.json").toBe(
      ""
    )
  })
})

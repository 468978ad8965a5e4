import { describe, expect, it } from "vitest"
import { importsOf, type SourceFile, sourceFiles, workspaces } from "./Imports.ts"
import { arrowViolations, CORE, describeViolations } from "./Rules.ts"

const file = (path: string, owner: string, text: string): SourceFile => ({
  path,
  owner,
  area: path.split("/")[2]!,
  imports: importsOf(text)
})

const rulesBroken = (example: SourceFile) => arrowViolations([example]).map((v) => `${v.specifier}: ${v.rule}`)

describe("the import scanner", () => {
  it("reads every kind of import, and nothing inside strings or comments", () => {
    const text = [
      `import type { A } from "a"`,
      `import {`,
      `  b`,
      `} from "b/sub"`,
      `export * as C from "c"`,
      `export { d } from "@scope/d/x"`,
      `import "side-effect"`,
      `const e = await import("dynamic")`,
      `type F = typeof import("type-import")`,
      `// import g from "line-comment"`,
      `/* import h from "block-comment" */`,
      'const i = `import j from "template"`',
      `const k = "import l from 'string'"`
    ].join("\n")
    expect(importsOf(text)).toEqual(["a", "b/sub", "c", "@scope/d/x", "side-effect", "dynamic", "type-import"])
  })
})

describe("the arrows point inward", () => {
  it("core imports no adapter, testkit, runtime or driver, in src or test", () => {
    expect(
      rulesBroken(file("packages/core/src/Leads.ts", CORE, `import * as SqlApp from "@leadline/sql-adapter/SqlApp"`))
    ).toEqual(["@leadline/sql-adapter/SqlApp: core imports no adapter, testkit, runtime or driver"])
    expect(
      rulesBroken(file("packages/core/test/Leads.test.ts", CORE, `import { PgClient } from "@effect/sql-pg"`))
    ).toEqual(["@effect/sql-pg: core imports no adapter, testkit, runtime or driver"])
    expect(
      rulesBroken(file("packages/core/test/Leads.test.ts", CORE, `const m = await import("@leadline/memory-adapter")`))
    ).toEqual(["@leadline/memory-adapter: core imports no adapter, testkit, runtime or driver"])
    expect(rulesBroken(file("packages/core/src/Leads.ts", CORE, `import { Effect } from "effect"`))).toEqual([])
  })

  it("core/src imports no node: module; core/test may", () => {
    expect(rulesBroken(file("packages/core/src/Ids.ts", CORE, `import { randomUUID } from "node:crypto"`))).toEqual([
      "node:crypto: core/src imports no node: module"
    ])
    expect(rulesBroken(file("packages/core/src/Ids.ts", CORE, `import { readFileSync } from "fs"`))).toEqual([
      "fs: core/src imports no node: module"
    ])
    expect(
      rulesBroken(file("packages/core/test/Ids.test.ts", CORE, `import { randomUUID } from "node:crypto"`))
    ).toEqual([])
  })

  it("an adapter imports no other adapter and not the testkit", () => {
    const rule = "an adapter imports core only, never another adapter or the testkit"
    expect(
      rulesBroken(
        file(
          "packages/sql-adapter/src/Leads.ts",
          "@leadline/sql-adapter",
          `import { Api } from "@leadline/http-adapter/Api"`
        )
      )
    ).toEqual([`@leadline/http-adapter/Api: ${rule}`])
    expect(
      rulesBroken(
        file("packages/memory-adapter/test/x.test.ts", "@leadline/memory-adapter", `export * from "@leadline/testkit"`)
      )
    ).toEqual([`@leadline/testkit: ${rule}`])
    expect(
      rulesBroken(
        file(
          "packages/webhook-worker/src/Worker.ts",
          "@leadline/webhook-worker",
          `import * as Errors from "@leadline/core/Errors"\nimport * as Sender from "@leadline/webhook-worker/Sender"`
        )
      )
    ).toEqual([])
  })

  it("the server is the composition root: nothing below it imports it, and it imports no test tooling", () => {
    expect(
      rulesBroken(
        file(
          "packages/http-adapter/src/Server.ts",
          "@leadline/http-adapter",
          `import * as C from "@leadline/server/Composition"`
        )
      )
    ).toEqual(["@leadline/server/Composition: core and the adapters never import the server (the composition root)"])
    expect(
      rulesBroken(
        file("packages/server/src/Serve.ts", "@leadline/server", `import * as T from "@leadline/testkit/TestServer"`)
      )
    ).toEqual(["@leadline/testkit/TestServer: the server's code imports no test tooling"])
    expect(
      rulesBroken(file("packages/server/src/Serve.ts", "@leadline/server", `import { it } from "vitest"`))
    ).toEqual(["vitest: the server's code imports no test tooling"])
    expect(
      rulesBroken(
        file("packages/server/test/x.test.ts", "@leadline/server", `import * as T from "@leadline/testkit/TestServer"`)
      )
    ).toEqual([])
    expect(
      rulesBroken(
        file(
          "packages/testkit/src/TestServer.ts",
          "@leadline/testkit",
          `import * as C from "@leadline/server/Composition"`
        )
      )
    ).toEqual([])
  })

  it("no package reaches into another's internal/ modules", () => {
    const rule = "a package's internal/ modules are closed to other packages (its exports map them to null)"
    expect(
      rulesBroken(
        file(
          "packages/testkit/test/x.test.ts",
          "@leadline/testkit",
          `import { orDie } from "@leadline/sql-adapter/internal/store"`
        )
      )
    ).toEqual([`@leadline/sql-adapter/internal/store: ${rule}`])
    expect(
      rulesBroken(
        file("examples/x/src/main.ts", "@leadline/x", `import * as R from "@leadline/core/leads/internal/rules"`)
      )
    ).toEqual([`@leadline/core/leads/internal/rules: ${rule}`])
    expect(
      rulesBroken(
        file(
          "packages/testkit/test/x.test.ts",
          "@leadline/testkit",
          `import { orDie } from "@leadline/sql-adapter/StoreErrors"`
        )
      )
    ).toEqual([])
  })

  it("holds in every workspace", () => {
    const files = workspaces().flatMap(sourceFiles)
    // The scan must see the tree, or it would pass on nothing.
    expect(files.filter((f) => f.owner === CORE && f.area === "src").length).toBeGreaterThan(0)
    expect(files.filter((f) => f.owner === "@leadline/sql-adapter").length).toBeGreaterThan(0)
    const violations = arrowViolations(files)
    expect(describeViolations(violations), "imports that break the arrows of docs/design.md").toBe("")
  })
})

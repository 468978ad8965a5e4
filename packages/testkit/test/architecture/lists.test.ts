import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { root } from "./Imports.ts"

/**
 * Every package composes its slices from one list, and every list has one order: the platform
 * services first, then the resources in core's `Slices.ts` order (lowest first). A reader who
 * knows one list finds a resource at the same place in all of them.
 */

/** The folders of a list's entries, in order: each entry's identifier resolved through the file's imports. */
const listFolders = (text: string, opening: RegExp): ReadonlyArray<string> => {
  const folderOf = new Map<string, string>()
  for (const match of text.matchAll(/import\s+(?:type\s+)?(?:\*\s+as\s+(\w+)|\{([^}]*)\})\s+from\s+"\.\/([\w-]+)\//g)) {
    const names = match[1] !== undefined ? [match[1]] : match[2]!.split(",").map((name) => name.trim())
    for (const name of names) if (name !== "") folderOf.set(name, match[3]!)
  }
  const start = text.search(opening)
  if (start < 0) throw new Error(`no list matching ${opening}`)
  const end = text.indexOf("]", start)
  const body = text.slice(start, end < 0 ? undefined : end)
  const folders: Array<string> = []
  for (const match of body.matchAll(/(?:\.add\(|^\s*)([A-Z]\w*)(?:\.\w+)?\)?,?\s*$/gm)) {
    const folder = folderOf.get(match[1]!)
    if (folder !== undefined) folders.push(folder)
  }
  return folders
}

/** What is out of order in `folders`, given core's resources lowest first. */
const disorder = (folders: ReadonlyArray<string>, resources: ReadonlyArray<string>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const firstResource = folders.findIndex((folder) => resources.includes(folder))
  folders.forEach((folder, index) => {
    if (!resources.includes(folder) && firstResource >= 0 && index > firstResource) {
      problems.push(`${folder} is a platform service listed after the resources`)
    }
  })
  const listed = folders.filter((folder) => resources.includes(folder))
  const expected = resources.filter((folder) => listed.includes(folder))
  if (JSON.stringify([...new Set(listed)]) !== JSON.stringify(expected)) {
    problems.push(`resources in the order ${[...new Set(listed)].join(", ")}; core's is ${expected.join(", ")}`)
  }
  return problems
}

const read = (path: string) => readFileSync(join(root, path), "utf8")

const coreResources = listFolders(read("packages/core/src/Slices.ts"), /export const all = \[/)

const LISTS: ReadonlyArray<readonly [string, RegExp]> = [
  ["packages/sql-adapter/src/Slices.ts", /export const all = \[/],
  ["packages/memory-adapter/src/MemoryStores.ts", /export const all = \[/],
  ["packages/http-adapter/src/Api.ts", /HttpApi\.make\("leadline"\)/],
  ["packages/http-adapter/src/Server.ts", /HttpApiBuilder\.layer\(Api\)/],
  ["packages/testkit/src/Resources.ts", /export const slices = \[/]
]

describe("every list of slices has one order", () => {
  it("reads core's resources, lowest first", () => {
    expect(coreResources.slice(0, 5)).toEqual(["leads", "channels", "templates", "conversations", "messages"])
    expect(coreResources).toContain("agents")
  })

  it("finds a resource out of place, and a platform service among the resources", () => {
    const resources = ["leads", "channels", "messages"]
    expect(disorder(["accounts", "leads", "channels", "messages"], resources)).toEqual([])
    expect(disorder(["accounts", "channels", "leads"], resources)).toEqual([
      "resources in the order channels, leads; core's is leads, channels"
    ])
    expect(disorder(["leads", "webhooks", "messages"], resources)).toEqual([
      "webhooks is a platform service listed after the resources"
    ])
  })

  it.each(LISTS)("%s: platform services first, then the resources in core's order", (path, opening) => {
    const folders = listFolders(read(path), opening)
    // The scan must see the list, or it would pass on nothing.
    expect(folders.filter((folder) => coreResources.includes(folder)).length).toBeGreaterThanOrEqual(8)
    expect(disorder(folders, coreResources)).toEqual([])
  })
})

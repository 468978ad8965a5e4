import { describe, expect, it } from "vitest"
import { compositionImports, folderGraph, loops, mutualPairs } from "./FolderGraph.ts"
import { importsOf, type SourceFile, sourceFiles, workspaces } from "./Imports.ts"

const SRC = "packages/core/src"

const file = (path: string, text: string): SourceFile => ({
  path: `${SRC}/${path}`,
  owner: "@leadline/core",
  area: "src",
  imports: importsOf(text)
})

/** A small core whose arrows all point down: messages over conversations over leads, on the kernel. */
const layered = [
  file("Errors.ts", `import { Schema } from "effect"`),
  file("leads/Leads.ts", `import { NotFound } from "../Errors.ts"`),
  file("conversations/Conversations.ts", `import type { Lead } from "../leads/Lead.ts"`),
  file("messages/Messages.ts", `import { Conversations } from "../conversations/Conversations.ts"`),
  file("Slices.ts", `import * as Messages from "./messages/Messages.ts"`),
  file("Services.ts", `import * as Slices from "./Slices.ts"`)
]

describe("core's folders form no loop", () => {
  it("passes a core whose arrows point one way", () => {
    const graph = folderGraph(layered, SRC)
    expect([loops(graph), mutualPairs(graph), compositionImports(graph)]).toEqual([[], [], []])
  })

  it("fails on a planted import back up, a type-only one too, naming the folders and the import", () => {
    const planted = [...layered, file("leads/LeadsRepo.ts", `import type { Message } from "../messages/Message.ts"`)]
    const graph = folderGraph(planted, SRC)
    expect(loops(graph)).toEqual([["conversations", "leads", "messages"]])
    expect(mutualPairs(graph)).toEqual([])
    const twoWay = folderGraph(
      [...layered, file("conversations/Metrics.ts", `import { MessagesRepo } from "../messages/MessagesRepo.ts"`)],
      SRC
    )
    expect(mutualPairs(twoWay)).toEqual([
      "conversations <-> messages: conversations/Metrics.ts -> messages/MessagesRepo.ts; messages/Messages.ts -> conversations/Conversations.ts"
    ])
  })

  it("fails on a folder that imports a composition list", () => {
    const graph = folderGraph([...layered, file("leads/Analytics.ts", `import * as Slices from "../Slices.ts"`)], SRC)
    expect(compositionImports(graph)).toEqual(["leads/Analytics.ts -> Slices.ts"])
  })

  it("holds in packages/core/src", () => {
    const core = workspaces().find((w) => w.dir === "packages/core")!
    const graph = folderGraph(sourceFiles(core), SRC)
    // The scan must see the tree, or it would pass on nothing.
    expect(graph.get("messages")?.has("conversations")).toBe(true)
    expect(
      loops(graph).map((loop) => loop.join(", ")),
      "folders that reach each other"
    ).toEqual([])
    expect(mutualPairs(graph), "folders that import each other").toEqual([])
    expect(compositionImports(graph), "imports of a composition list from a folder").toEqual([])
  })
})

import { posix } from "node:path"
import type { SourceFile } from "./Imports.ts"

/**
 * Core's folders as a graph: a relative import (type-only ones too: they tie meanings together)
 * from a file in one folder to a file in another is an edge. A file at the top of `src/` is a node
 * of its own (`Errors.ts`), so the shared kernel there does not fuse the folders that use it.
 */
export type Graph = ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<string>>>

/**
 * The composition lists at the top of core's `src/`: they import every resource to merge their
 * layers and gather their events, so no resource may import them back.
 */
export const COMPOSITION: ReadonlyArray<string> = ["Services.ts", "Slices.ts", "EventCatalog.ts", "index.ts"]

/**
 * The platform services above every resource, which read the lists: analytics sums every slice's
 * metrics, webhooks subscribe to every slice's event types, the event log shows a key the types it
 * may read. No resource imports them.
 */
export const ABOVE_THE_SLICES: ReadonlyArray<string> = ["analytics", "webhooks", "eventlog"]

const nodeOf = (pathInSrc: string): string => pathInSrc.split("/")[0]!

/** The graph of the files under `srcDir` (a path like `packages/core/src`), each edge with the imports behind it. */
export const folderGraph = (files: ReadonlyArray<SourceFile>, srcDir: string): Graph => {
  const graph = new Map<string, Map<string, Array<string>>>()
  for (const file of files) {
    if (!file.path.startsWith(`${srcDir}/`)) continue
    const from = file.path.slice(srcDir.length + 1)
    for (const specifier of file.imports) {
      if (!specifier.startsWith(".")) continue
      const target = posix.normalize(posix.join(posix.dirname(from), specifier))
      const [a, b] = [nodeOf(from), nodeOf(target)]
      if (a === b || target.startsWith("..")) continue
      const edges = graph.get(a) ?? new Map<string, Array<string>>()
      graph.set(a, edges)
      edges.set(b, [...(edges.get(b) ?? []), `${from} -> ${target}`])
    }
  }
  return graph
}

/** The groups of nodes that reach each other (Tarjan's strongly connected components of two or more). */
export const loops = (graph: Graph): ReadonlyArray<ReadonlyArray<string>> => {
  const nodes = new Set([...graph.keys(), ...[...graph.values()].flatMap((edges) => [...edges.keys()])])
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<ReadonlyArray<string>> = []
  let next = 0
  const visit = (node: string) => {
    index.set(node, next)
    low.set(node, next)
    next++
    stack.push(node)
    onStack.add(node)
    for (const to of graph.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!))
    }
    if (low.get(node) === index.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const node of [...nodes].sort()) if (!index.has(node)) visit(node)
  return found
}

/** Pairs of nodes that import each other, each with the imports of both directions. */
export const mutualPairs = (graph: Graph): ReadonlyArray<string> =>
  [...graph].flatMap(([a, edges]) =>
    [...edges.keys()]
      .filter((b) => a < b && graph.get(b)?.has(a) === true)
      .map((b) => `${a} <-> ${b}: ${[...edges.get(b)!, ...graph.get(b)!.get(a)!].join("; ")}`)
  )

/** Imports of a composition list from anywhere but another list or a platform service above the slices. */
export const compositionImports = (graph: Graph): ReadonlyArray<string> =>
  [...graph].flatMap(([from, edges]) =>
    COMPOSITION.includes(from) || ABOVE_THE_SLICES.includes(from)
      ? []
      : [...edges].filter(([to]) => COMPOSITION.includes(to)).flatMap(([, imports]) => imports)
  )

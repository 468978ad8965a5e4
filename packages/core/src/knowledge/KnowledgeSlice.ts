import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import { Knowledge } from "./Knowledge.ts"
import * as KnowledgeEvents from "./KnowledgeEvents.ts"
import { SourceFetcher } from "./SourceFetcher.ts"
import { SourceRemoval } from "./SourceRemoval.ts"

/** Knowledge sources, their chunks and full-text search; `SourceFetcher.loop` fetches url sources (docs/contract-commerce-ai.md §4). */
export const slice = Slice.make({
  name: "knowledge",
  layer: Layer.mergeAll(Knowledge.layer, SourceFetcher.layer),
  events: [KnowledgeEvents.updated],
  hooks: [SourceRemoval.layer]
})

import * as Slice from "../Slice.ts"
import { Knowledge } from "./Knowledge.ts"
import * as KnowledgeEvents from "./KnowledgeEvents.ts"

/** Knowledge sources, their chunks and full-text search (CONTRACT-COMMERCE-AI §4). */
export const slice = Slice.make({
  name: "knowledge",
  layer: Knowledge.layer,
  events: [KnowledgeEvents.updated]
})

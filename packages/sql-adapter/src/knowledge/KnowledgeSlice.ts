import * as Slice from "../Slice.ts"
import * as Knowledge0012 from "./migrations/0012_knowledge.ts"
import * as KnowledgeUrls0016 from "./migrations/0016_knowledge_urls.ts"
import * as SqlKnowledge from "./SqlKnowledge.ts"

/** Knowledge sources and their chunks, searched with PostgreSQL full-text search (docs/contract-commerce-ai.md §4). */
export const slice = Slice.make({
  name: "knowledge",
  layer: SqlKnowledge.layer,
  migrations: [Knowledge0012.migration, KnowledgeUrls0016.migration]
})

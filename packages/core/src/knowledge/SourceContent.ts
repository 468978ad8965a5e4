import { Effect } from "effect"
import * as Ids from "../Ids.ts"
import * as Sha256 from "../internal/sha256.ts"
import * as Chunking from "./Chunking.ts"
import type { KnowledgeChunk, KnowledgeSourceWithContent } from "./Source.ts"

/** What a source's content makes of it: its chunks (with their ids) and the fields that follow from it. */
export interface Prepared {
  readonly chunks: ReadonlyArray<KnowledgeChunk>
  readonly fields: Pick<KnowledgeSourceWithContent, "content" | "char_count" | "chunk_count" | "content_sha256">
}

/** One place for an upload, a PATCH of content and a fetched page: chunked, counted and hashed alike. */
export const prepare = (sourceId: string, kind: "text" | "markdown", content: string): Effect.Effect<Prepared> =>
  Effect.gen(function* () {
    const chunks: Array<KnowledgeChunk> = []
    for (const piece of Chunking.chunk(content, kind))
      chunks.push({ id: yield* Ids.make("kc"), source_id: sourceId, ...piece })
    return {
      chunks,
      fields: {
        content,
        char_count: content.length,
        chunk_count: chunks.length,
        content_sha256: yield* Sha256.hex(content)
      }
    }
  })

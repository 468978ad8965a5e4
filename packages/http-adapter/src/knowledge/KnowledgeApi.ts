import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { IntegerString, Meta, PageQueryFields } from "@leadline/core/Pagination"
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS, SearchMode, SearchResults } from "@leadline/core/knowledge/Search"
import {
  CreateSource,
  DeletedSource,
  KnowledgeChunk,
  KnowledgeSource,
  KnowledgeSourceWithContent,
  MAX_CONTENT_CHARS,
  SourceStatus,
  UpdateSource
} from "@leadline/core/knowledge/Source"
import { Id, Text } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Conflict, Forbidden, NotFound, ValidationError } from "../WireErrors.ts"

export const SourceList = Schema.Struct({ sources: Schema.Array(KnowledgeSource), meta: Meta }).annotate({
  identifier: "KnowledgeSourceList"
})
export const ChunkList = Schema.Struct({ chunks: Schema.Array(KnowledgeChunk), meta: Meta }).annotate({
  identifier: "KnowledgeChunkList"
})

const SourceId = { id: Id.annotate({ description: "A knowledge source id, `ks_…`" }) }
const EVENT = "Emits `knowledge.updated`."

export class KnowledgeApi extends HttpApiGroup.make("knowledge")
  .add(
    HttpApiEndpoint.get("list", "/sources", {
      query: { ...PageQueryFields, status: Schema.optional(SourceStatus) },
      success: SourceList,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "List knowledge sources",
        description: "Newest first, without their content. Needs `knowledge:read`."
      })
    ),
    Idempotent.create("create", "/sources", {
      payload: CreateSource,
      success: KnowledgeSource,
      error: [Forbidden, ValidationError, Conflict]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Upload a knowledge source",
        description: `\`text\` or \`markdown\` (headings make sections that prefix their chunks), at most ${MAX_CONTENT_CHARS} characters: chunked in the same transaction, so it answers \`ready\` and is searchable at once. \`url\` (an https page, unique per account, 409 otherwise): answers \`processing\`; the server fetches it (at most 2 MiB, 10 s and 3 redirects; HTML, plain text or markdown; private addresses refused at connect) and makes it \`ready\`, or \`failed\` with \`error\`, with \`knowledge.updated\`. \`language\` (a PostgreSQL text-search configuration) decides how its words are stemmed; the server's default is \`english\`. 409 \`conflict\` past the account's limit of sources. ${EVENT} Needs \`knowledge:write\`.`
      })
    ),
    HttpApiEndpoint.get("search", "/search", {
      query: {
        q: Text.annotate({ description: `The question, 1 to ${MAX_QUERY_CHARS} characters` }),
        limit: Schema.optional(IntegerString).annotate({
          description: `How many results, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})`
        }),
        source_ids: Schema.optional(Text).annotate({ description: "Only these sources: ids separated by commas" }),
        mode: Schema.optional(SearchMode).annotate({
          description: "`auto` (default) and `fts` search the words; `hybrid` needs embeddings, which are off"
        })
      },
      success: SearchResults,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Search the knowledge base",
        description:
          "Full-text search over the account's chunks, each in its source's language: the passages with every term of the question first (`match: all_terms`), then those with some (`some_terms`), each tier by rank. Top `limit`, not paginated. Needs `knowledge:read`."
      })
    ),
    HttpApiEndpoint.get("get", "/sources/:id", {
      params: SourceId,
      success: KnowledgeSourceWithContent,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Get a knowledge source",
        description: "With its content. Needs `knowledge:read`."
      })
    ),
    HttpApiEndpoint.get("chunks", "/sources/:id/chunks", {
      params: SourceId,
      query: PageQueryFields,
      success: ChunkList,
      error: [Forbidden, NotFound, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "List a source's chunks",
        description: "In the order of the source: what search finds and agents quote. Needs `knowledge:read`."
      })
    ),
    HttpApiEndpoint.post("refresh", "/sources/:id/refresh", {
      params: SourceId,
      success: KnowledgeSource.pipe(HttpApiSchema.status(202)),
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Fetch a url source again",
        description: `202 with the source \`processing\` until its page is fetched again (then \`ready\` or \`failed\`, with \`knowledge.updated\`). Only url sources (409 otherwise). Needs \`knowledge:write\`.`
      })
    ),
    HttpApiEndpoint.patch("update", "/sources/:id", {
      params: SourceId,
      payload: UpdateSource,
      success: KnowledgeSource,
      error: [Forbidden, NotFound, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Change a knowledge source",
        description: `A new \`title\`, or new \`content\` (chunked again in the same transaction). A PATCH that changes nothing emits nothing. ${EVENT} Needs \`knowledge:write\`.`
      })
    ),
    HttpApiEndpoint.delete("delete", "/sources/:id", {
      params: SourceId,
      success: DeletedSource,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete a knowledge source",
        description: `Its chunks go with it: search stops finding them at once. ${EVENT} (with \`deleted: true\`) Needs \`knowledge:write\`.`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/knowledge")
  .annotateMerge(
    OpenApi.annotations({
      title: "Knowledge",
      description:
        "Sources the agents answer from, their chunks and full-text search (docs/contract-commerce-ai.md §4)."
    })
  ) {}

import { Context, type Effect } from "effect"
import type { Conflict } from "../Errors.ts"
import type { Listed, Page } from "../Pagination.ts"
import type { SearchRequest } from "./Search.ts"
import type { KnowledgeChunk, KnowledgeSource, KnowledgeSourceWithContent, SourceFilter } from "./Source.ts"

/** A chunk search found, before core turns it into a result. */
export interface Hit {
  readonly chunk: KnowledgeChunk
  readonly sourceTitle: string
  /** The chunk has every term of the query (PostgreSQL: `websearch_to_tsquery` matched). */
  readonly allTerms: boolean
  /** Higher is better (PostgreSQL: `ts_rank_cd` against the OR of the query's terms). */
  readonly rank: number
  /** The best fragment, matched terms in `<b>…</b>` (PostgreSQL: `ts_headline`). */
  readonly snippet: string
}

/**
 * Knowledge sources and their chunks, scoped to one account. A source's chunks are written and
 * removed with it; each chunk is searched in its source's language.
 */
export class KnowledgeRepo extends Context.Service<
  KnowledgeRepo,
  {
    /** Adds the source and its chunks; Conflict when its `url` is a source of the account already. */
    readonly insert: (
      accountId: string,
      source: KnowledgeSourceWithContent,
      chunks: ReadonlyArray<KnowledgeChunk>
    ) => Effect.Effect<void, Conflict>
    readonly count: (accountId: string) => Effect.Effect<number>
    /** Newest first (`created_at` desc, then `id` desc), without content. */
    readonly list: (accountId: string, filter: SourceFilter, page: Page) => Effect.Effect<Listed<KnowledgeSource>>
    readonly find: (accountId: string, id: string) => Effect.Effect<KnowledgeSourceWithContent | undefined>
    /** The source, locked for the caller's transaction where the store can lock (a PATCH's read). */
    readonly findForUpdate: (accountId: string, id: string) => Effect.Effect<KnowledgeSourceWithContent | undefined>
    /** Replaces the source; `chunks`, when given, replace its chunks. */
    readonly update: (
      accountId: string,
      source: KnowledgeSourceWithContent,
      chunks: ReadonlyArray<KnowledgeChunk> | undefined
    ) => Effect.Effect<void>
    /** Deletes the source and its chunks; returns it as it was, undefined when it is not in the account. */
    readonly remove: (accountId: string, id: string) => Effect.Effect<KnowledgeSourceWithContent | undefined>
    /** A source's chunks in `position` order. */
    readonly chunks: (accountId: string, sourceId: string, page: Page) => Effect.Effect<Listed<KnowledgeChunk>>
    /**
     * The best chunks for the query: those with every term first, then by rank; a chunk with none of
     * the query's terms is never a hit.
     */
    readonly search: (accountId: string, request: SearchRequest) => Effect.Effect<ReadonlyArray<Hit>>
    /** The account's source of this URL, if any: a URL is a source once per account. */
    readonly findByUrl: (accountId: string, url: string) => Effect.Effect<KnowledgeSource | undefined>
    /**
     * Up to `limit` `processing` URL sources no other fetcher holds, each now held until `leaseUntil`
     * (a fetcher that dies leaves its source to another).
     */
    readonly claimFetches: (
      now: string,
      leaseUntil: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<{ readonly accountId: string; readonly source: KnowledgeSourceWithContent }>>
    /** Which of these ids are sources of the account (an agent's `knowledge_source_ids`). */
    readonly existing: (accountId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  }
>()("core/KnowledgeRepo") {}

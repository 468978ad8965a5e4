import { Schema } from "effect"
import { Text } from "../Text.ts"

export const MAX_QUERY_CHARS = 500
export const DEFAULT_LIMIT = 5
export const MAX_LIMIT = 20

export const Match = Schema.Literals(["all_terms", "some_terms", "semantic"]).annotate({
  description:
    "`all_terms`: the passage has every term of the question; `some_terms`: some of them; `semantic`: found by embeddings"
})

export const SearchResult = Schema.Struct({
  chunk_id: Schema.String,
  source_id: Schema.String,
  source_title: Schema.String,
  position: Schema.Number,
  heading: Schema.NullOr(Schema.String),
  text: Schema.String,
  snippet: Schema.String.annotate({ description: "The passage's best fragment, matched terms in `<b>…</b>`" }),
  score: Schema.Number.annotate({ description: "Higher is better; comparable only within one response" }),
  match: Match
}).annotate({ identifier: "KnowledgeSearchResult" })
export type SearchResult = typeof SearchResult.Type

export const SearchResults = Schema.Struct({
  query: Schema.String,
  mode: Schema.Literals(["fts", "hybrid"]),
  results: Schema.Array(SearchResult)
}).annotate({ identifier: "KnowledgeSearchResults" })
export type SearchResults = typeof SearchResults.Type

export const SearchMode = Schema.Literals(["auto", "fts", "hybrid"])

/** The search route's query, decoded by core so an embedding app gets the same rules. */
export const SearchInput = Schema.Struct({
  q: Text.check(
    Schema.makeFilter((q: string) => q.trim().length > 0 || "q must not be empty"),
    Schema.isMaxLength(MAX_QUERY_CHARS, { message: `q must be at most ${MAX_QUERY_CHARS} characters` })
  ),
  limit: Schema.optional(
    Schema.Number.check(
      Schema.makeFilter(
        (n: number) =>
          (Number.isInteger(n) && n >= 1 && n <= MAX_LIMIT) || `limit must be an integer from 1 to ${MAX_LIMIT}`
      )
    )
  ),
  source_ids: Schema.optional(Schema.Array(Text).check(Schema.isMaxLength(100, { message: "at most 100 source ids" }))),
  mode: Schema.optional(SearchMode)
}).annotate({ identifier: "KnowledgeSearchInput" })
export type SearchInput = typeof SearchInput.Type

/** What a store's search is asked: the account's chunks, optionally of some sources only. */
export interface SearchRequest {
  readonly query: string
  readonly limit: number
  /** undefined: every source of the account. */
  readonly sourceIds?: ReadonlyArray<string> | undefined
}

/**
 * The score of a hit, monotone in the order results are ranked: every all-terms hit above every
 * some-terms hit, then by `ts_rank_cd` (mapped into [0, 1) so the tiers cannot overlap).
 */
export const score = (allTerms: boolean, rank: number): number => {
  const within = rank / (1 + rank)
  return Math.round(((allTerms ? 1 : 0) + within) * 1e6) / 1e6
}

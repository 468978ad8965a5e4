import { Schema, SchemaGetter } from "effect"

export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 100

// Query values arrive as strings; only plain decimal integers are accepted, so
// "1.5", "1e2", " 5" and "abc" are refused rather than coerced.
export const IntegerString = Schema.String.check(
  Schema.isPattern(/^-?\d{1,15}$/, { expected: "an integer", message: "Expected an integer" })
).pipe(Schema.decodeTo(Schema.Int, { decode: SchemaGetter.Number(), encode: SchemaGetter.String() }))

export const Limit = IntegerString.check(
  Schema.isBetween({ minimum: 1, maximum: MAX_LIMIT }, { message: `limit must be an integer from 1 to ${MAX_LIMIT}` })
).annotate({ description: `Items per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})` })

export const MAX_OFFSET = 1_000_000_000

export const Offset = IntegerString.check(
  Schema.isBetween(
    { minimum: 0, maximum: MAX_OFFSET },
    { message: `offset must be an integer from 0 to ${MAX_OFFSET}` }
  )
).annotate({ description: "Position of the first item (default 0)" })

/** A time in a query (`created_after=…`): ISO 8601 with its offset, so no zone is guessed. */
export const QueryTime = Schema.String.check(
  Schema.makeFilter(
    (value: string) =>
      (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/.test(value) &&
        Number.isFinite(Date.parse(value))) ||
      "must be an ISO 8601 time with its offset, like 2026-01-31T09:00:00Z"
  )
)

/** The query of every list endpoint; add filters beside these. */
export const PageQueryFields = {
  limit: Schema.optional(Limit),
  offset: Schema.optional(Offset)
}

export interface Page {
  readonly limit: number
  readonly offset: number
}

export const page = (query: { readonly limit?: number | undefined; readonly offset?: number | undefined }): Page => ({
  limit: query.limit ?? DEFAULT_LIMIT,
  offset: query.offset ?? 0
})

export const Meta = Schema.Struct({
  limit: Schema.Int,
  offset: Schema.Int,
  total: Schema.Int,
  has_more: Schema.Boolean,
  next_offset: Schema.NullOr(Schema.Int)
}).annotate({ identifier: "PageMeta" })
export type Meta = typeof Meta.Type

export const meta = (page: Page, total: number): Meta => {
  const next = page.offset + page.limit
  const hasMore = next < total
  return { limit: page.limit, offset: page.offset, total, has_more: hasMore, next_offset: hasMore ? next : null }
}

/** One page of items plus the total that matched, as every list port returns it (a `Page` asks for it). */
export interface Listed<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

import { Schema } from "effect"
import { Text } from "../Text.ts"

/**
 * The text-search configurations present on both PostgreSQL 15 and PGlite (checked with
 * `pg_ts_config` on each: PostgreSQL 15 lacks only PGlite's `estonian`). A source's `language`
 * picks how its words are stemmed and which are stop words.
 */
export const LANGUAGES = [
  "arabic",
  "armenian",
  "basque",
  "catalan",
  "danish",
  "dutch",
  "english",
  "finnish",
  "french",
  "german",
  "greek",
  "hindi",
  "hungarian",
  "indonesian",
  "irish",
  "italian",
  "lithuanian",
  "nepali",
  "norwegian",
  "portuguese",
  "romanian",
  "russian",
  "serbian",
  "simple",
  "spanish",
  "swedish",
  "tamil",
  "turkish",
  "yiddish"
] as const
export type Language = (typeof LANGUAGES)[number]

export const Language = Schema.Literals(LANGUAGES).annotate({
  description: "A PostgreSQL text-search configuration: how words are stemmed; `simple` only lower-cases"
})

/** Chatwoot's document limit (docs/contract-commerce-ai.md §4). */
export const MAX_CONTENT_CHARS = 200_000

export const SourceKind = Schema.Literals(["text", "markdown", "url"])
export const SourceStatus = Schema.Literals(["processing", "ready", "failed"])

const fields = {
  id: Schema.String.annotate({ description: "`ks_` followed by a sortable id" }),
  kind: SourceKind.annotate({ description: "`text`, `markdown` (headings make sections) or `url`" }),
  title: Schema.String,
  url: Schema.NullOr(Schema.String),
  language: Language,
  status: SourceStatus.annotate({
    description: "`ready` once chunked (text and markdown are chunked on upload); `failed` says why in `error`"
  }),
  error: Schema.NullOr(Schema.String),
  char_count: Schema.Number,
  chunk_count: Schema.Number,
  content_sha256: Schema.NullOr(Schema.String).annotate({ description: "Hex SHA-256 of the UTF-8 content" }),
  embedding_status: Schema.Literals(["none", "pending", "ready", "failed"]).annotate({
    description: "`none` while embeddings are off (the default)"
  }),
  created_at: Schema.String,
  updated_at: Schema.String
}

/** A source as lists, events and writes show it: without its content. */
export const KnowledgeSource = Schema.Struct(fields).annotate({ identifier: "KnowledgeSource" })
export type KnowledgeSource = typeof KnowledgeSource.Type

/** A source as `GET /sources/{id}` shows it: with its content. */
export const KnowledgeSourceWithContent = Schema.Struct({ ...fields, content: Schema.String }).annotate({
  identifier: "KnowledgeSourceWithContent"
})
export type KnowledgeSourceWithContent = typeof KnowledgeSourceWithContent.Type

const Title = Text.check(
  Schema.isMinLength(1, { message: "title must not be empty" }),
  Schema.isMaxLength(200, { message: "title must be at most 200 characters" })
)

const Content = Text.check(
  Schema.makeFilter((text: string) => text.trim().length > 0 || "content must have some text"),
  Schema.isMaxLength(MAX_CONTENT_CHARS, { message: `content must be at most ${MAX_CONTENT_CHARS} characters` })
)

/** A source whose content is given: chunked in the upload's transaction, `ready` at once. */
export const CreateContentSource = Schema.Struct({
  kind: Schema.Literals(["text", "markdown"]).annotate({
    description: "`text`, or `markdown` (headings make sections that prefix their chunks)"
  }),
  title: Title,
  content: Content,
  language: Schema.optional(Language)
}).annotate({ identifier: "CreateKnowledgeContentSource" })

/** A web page: `processing` until the server has fetched it, then `ready` or `failed`. */
export const CreateUrlSource = Schema.Struct({
  kind: Schema.Literal("url"),
  url: Text.annotate({ description: "An https URL (http and private addresses only where the server allows them)" }),
  title: Schema.optional(Title).annotate({ description: "The URL unless given" }),
  language: Schema.optional(Language)
}).annotate({ identifier: "CreateKnowledgeUrlSource" })

export const CreateSource = Schema.Union([CreateContentSource, CreateUrlSource]).annotate({
  identifier: "CreateKnowledgeSource"
})
export type CreateSource = typeof CreateSource.Type

export const UpdateSource = Schema.Struct({
  title: Schema.optional(Title),
  content: Schema.optional(Content)
}).annotate({ identifier: "UpdateKnowledgeSource" })
export type UpdateSource = typeof UpdateSource.Type

export interface SourceFilter {
  readonly status?: "processing" | "ready" | "failed" | undefined
}

export const DeletedSource = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotate({
  identifier: "DeletedKnowledgeSource"
})

export const KnowledgeChunk = Schema.Struct({
  id: Schema.String.annotate({ description: "`kc_` followed by a sortable id" }),
  source_id: Schema.String,
  position: Schema.Number.annotate({ description: "From 0, in the order of the source" }),
  heading: Schema.NullOr(Schema.String).annotate({ description: "The markdown heading path, `A > B`" }),
  text: Schema.String
}).annotate({ identifier: "KnowledgeChunk" })
export type KnowledgeChunk = typeof KnowledgeChunk.Type

/** The source without its content: what lists, events and writes return. */
export const withoutContent = (source: KnowledgeSourceWithContent): KnowledgeSource => {
  const { content: _content, ...rest } = source
  return rest
}

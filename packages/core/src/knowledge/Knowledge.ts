import { Context, Effect, Layer } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { Conflict, decodeInput, invalidField, type InvalidInput, NotFound, type PermissionDenied } from "../Errors.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import * as Pagination from "../Pagination.ts"
import { definedFields } from "../Patch.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import * as Versioned from "../Versioned.ts"
import { problemWith } from "../outbound/UrlPolicy.ts"
import { OutboundSettings } from "../outbound/OutboundSettings.ts"
import * as KnowledgeEvents from "./KnowledgeEvents.ts"
import { KnowledgeRepo } from "./KnowledgeRepo.ts"
import * as SourceContent from "./SourceContent.ts"
import {
  DEFAULT_LIMIT,
  type SearchInput,
  SearchInput as SearchInputSchema,
  type SearchResults,
  score
} from "./Search.ts"
import {
  CreateSource,
  type KnowledgeChunk,
  type KnowledgeSource,
  type KnowledgeSourceWithContent,
  type Language,
  type SourceFilter,
  UpdateSource,
  withoutContent
} from "./Source.ts"
import { SourceRemoval } from "./SourceRemoval.ts"

type Needs = CurrentPrincipal

/** Deployment settings for the knowledge base (docs/contract-commerce-ai.md §9); the contract's defaults. */
export class KnowledgeSettings extends Context.Reference<{
  /** `LEADLINE_KNOWLEDGE_LANGUAGE`: a source's language when its upload names none. */
  readonly defaultLanguage: Language
  /** `LEADLINE_KNOWLEDGE_MAX_SOURCES`: per account. */
  readonly maxSources: number
}>("core/KnowledgeSettings", { defaultValue: () => ({ defaultLanguage: "english", maxSources: 1000 }) }) {}

/**
 * The knowledge base (docs/contract-commerce-ai.md §4): text and markdown sources, chunked in the same
 * transaction as their upload, searched with full-text search; `knowledge.updated` on every change.
 */
export class Knowledge extends Context.Service<
  Knowledge,
  {
    readonly list: (
      filter: SourceFilter,
      page: Pagination.Page
    ) => Effect.Effect<{ sources: ReadonlyArray<KnowledgeSource>; meta: Pagination.Meta }, PermissionDenied, Needs>
    readonly get: (id: string) => Effect.Effect<KnowledgeSourceWithContent, PermissionDenied | NotFound, Needs>
    readonly chunks: (
      id: string,
      page: Pagination.Page
    ) => Effect.Effect<
      { chunks: ReadonlyArray<KnowledgeChunk>; meta: Pagination.Meta },
      PermissionDenied | NotFound,
      Needs
    >
    readonly create: (
      input: CreateSource
    ) => Effect.Effect<KnowledgeSource, PermissionDenied | InvalidInput | Conflict, Needs>
    /** A `url` source fetched again: `processing` until the fetcher is done (409 for other kinds). */
    readonly refresh: (id: string) => Effect.Effect<KnowledgeSource, PermissionDenied | NotFound | Conflict, Needs>
    readonly update: (
      id: string,
      input: UpdateSource
    ) => Effect.Effect<KnowledgeSource, PermissionDenied | NotFound | InvalidInput, Needs>
    readonly remove: (id: string) => Effect.Effect<{ id: string; deleted: true }, PermissionDenied | NotFound, Needs>
    readonly search: (input: SearchInput) => Effect.Effect<SearchResults, PermissionDenied | InvalidInput, Needs>
  }
>()("core/Knowledge") {
  static readonly layer: Layer.Layer<Knowledge, never, KnowledgeRepo | SourceRemoval | Transactor | Outbox> =
    Layer.effect(
      Knowledge,
      Effect.gen(function* () {
        const repo = yield* KnowledgeRepo
        const removal = yield* SourceRemoval
        // URLs follow the webhooks' rules, private addresses included (a development setting).
        const webhookSettings = yield* OutboundSettings
        const transactor = yield* Transactor
        const outbox = yield* Outbox
        const withOutbox = Effect.provideService(Outbox, outbox)
        const notFound = (id: string) => new NotFound({ resource: "knowledge source", id })
        const decodeCreate = decodeInput(CreateSource, "knowledge source")
        const decodeUpdate = decodeInput(UpdateSource, "knowledge source")
        const decodeSearch = decodeInput(SearchInputSchema, "search")

        const list = Effect.fnUntraced(function* (filter: SourceFilter, page: Pagination.Page) {
          const principal = yield* authorize("knowledge.view")
          const slice = yield* repo.list(principal.accountId, filter, page)
          return { sources: slice.items, meta: Pagination.meta(page, slice.total) }
        }, Tracing.span("Knowledge.list"))

        const get = Effect.fnUntraced(function* (id: string) {
          const principal = yield* authorize("knowledge.view")
          return (yield* repo.find(principal.accountId, id)) ?? (yield* notFound(id))
        }, Tracing.span("Knowledge.get"))

        const chunks = Effect.fnUntraced(function* (id: string, page: Pagination.Page) {
          const principal = yield* authorize("knowledge.view")
          if ((yield* repo.find(principal.accountId, id)) === undefined) return yield* notFound(id)
          const slice = yield* repo.chunks(principal.accountId, id, page)
          return { chunks: slice.items, meta: Pagination.meta(page, slice.total) }
        }, Tracing.span("Knowledge.chunks"))

        const create = Effect.fnUntraced(function* (raw: CreateSource) {
          const principal = yield* authorize("knowledge.upload")
          const input = yield* decodeCreate(raw)
          const settings = yield* KnowledgeSettings
          const now = yield* Ids.now
          const id = yield* Ids.make("ks")
          const language = input.language ?? settings.defaultLanguage
          let source: KnowledgeSourceWithContent
          let chunks: ReadonlyArray<KnowledgeChunk> = []
          if (input.kind === "url") {
            const problem = problemWith(input.url, { allowPrivate: webhookSettings.allowPrivateUrls })
            if (problem !== undefined) return yield* invalidField("url", problem.replace(/^url /, ""))
            const url = new URL(input.url).href
            if ((yield* repo.findByUrl(principal.accountId, url)) !== undefined) {
              return yield* new Conflict({ message: `A knowledge source of ${url} already exists` })
            }
            // Fetched by the source fetcher after the commit: `processing` until then.
            source = {
              id,
              kind: "url",
              title: input.title ?? url,
              url,
              language,
              status: "processing",
              error: null,
              char_count: 0,
              chunk_count: 0,
              content_sha256: null,
              embedding_status: "none",
              created_at: now,
              updated_at: now,
              content: ""
            }
          } else {
            const prepared = yield* SourceContent.prepare(id, input.kind, input.content)
            chunks = prepared.chunks
            source = {
              id,
              kind: input.kind,
              title: input.title,
              url: null,
              language,
              status: "ready",
              error: null,
              ...prepared.fields,
              embedding_status: "none",
              created_at: now,
              updated_at: now
            }
          }
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              // Counted in the transaction that inserts: concurrent uploads at the limit may pass it by
              // a few (no lock is worth it for a guard against runaway uploads, not a billed quantity).
              if ((yield* repo.count(principal.accountId)) >= settings.maxSources) {
                return yield* new Conflict({
                  message: `This account has reached its limit of ${settings.maxSources} knowledge sources`
                })
              }
              // A URL taken by a concurrent upload meanwhile: the unique index refuses it as a Conflict.
              yield* repo.insert(principal.accountId, source, chunks)
              const shown = withoutContent(source)
              yield* emit(KnowledgeEvents.updated, shown).pipe(withOutbox)
              return shown
            })
          )
        }, Tracing.span("Knowledge.create"))

        const refresh = Effect.fnUntraced(function* (id: string) {
          const principal = yield* authorize("knowledge.upload")
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              const current = yield* repo.findForUpdate(principal.accountId, id)
              if (current === undefined) return yield* notFound(id)
              if (current.kind !== "url") return yield* new Conflict({ message: "Only url sources can be refreshed" })
              if (current.status === "processing") return withoutContent(current)
              const next = { ...current, status: "processing" as const, error: null, updated_at: yield* Ids.now }
              yield* repo.update(principal.accountId, next, undefined)
              return withoutContent(next)
            })
          )
        }, Tracing.span("Knowledge.refresh"))

        const update = Effect.fnUntraced(function* (id: string, raw: UpdateSource) {
          const principal = yield* authorize("knowledge.upload")
          const input = yield* decodeUpdate(raw)
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              const current = yield* repo.findForUpdate(principal.accountId, id)
              if (current === undefined) return yield* notFound(id)
              if (input.content !== undefined && current.kind === "url") {
                return yield* invalidField("content", "a url source's content comes from its url")
              }
              const changes = definedFields(input)
              const contentChanged = changes.content !== undefined && changes.content !== current.content
              if (!contentChanged && (changes.title === undefined || changes.title === current.title)) {
                return withoutContent(current)
              }
              // Content is never a url source's (refused above): its kind is text or markdown.
              const prepared =
                contentChanged && current.kind !== "url"
                  ? yield* SourceContent.prepare(id, current.kind, changes.content!)
                  : undefined
              const next: KnowledgeSourceWithContent = {
                ...current,
                ...changes,
                ...prepared?.fields,
                updated_at: yield* Ids.now
              }
              yield* repo.update(principal.accountId, next, prepared?.chunks)
              const shown = withoutContent(next)
              yield* emit(
                KnowledgeEvents.updated,
                shown,
                Versioned.previousAttributes(withoutContent(current), shown)
              ).pipe(withOutbox)
              return shown
            })
          )
        }, Tracing.span("Knowledge.update"))

        const remove = Effect.fnUntraced(function* (id: string) {
          const principal = yield* authorize("knowledge.delete")
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              const removed = yield* repo.remove(principal.accountId, id)
              if (removed === undefined) return yield* notFound(id)
              yield* emit(KnowledgeEvents.updated, { ...withoutContent(removed), deleted: true as const }).pipe(
                withOutbox
              )
              yield* removal.run({ accountId: principal.accountId, sourceId: id })
              return { id, deleted: true as const }
            })
          )
        }, Tracing.span("Knowledge.remove"))

        const search = Effect.fnUntraced(function* (raw: SearchInput) {
          const principal = yield* authorize("knowledge.view")
          const input = yield* decodeSearch(raw)
          if (input.mode === "hybrid") {
            return yield* invalidField("mode", "hybrid search needs embeddings, which are off on this server", "query")
          }
          const hits = yield* repo.search(principal.accountId, {
            query: input.q,
            limit: input.limit ?? DEFAULT_LIMIT,
            sourceIds: input.source_ids
          })
          return {
            query: input.q,
            mode: "fts" as const,
            results: hits.map((hit) => ({
              chunk_id: hit.chunk.id,
              source_id: hit.chunk.source_id,
              source_title: hit.sourceTitle,
              position: hit.chunk.position,
              heading: hit.chunk.heading,
              text: hit.chunk.text,
              snippet: hit.snippet,
              score: score(hit.allTerms, hit.rank),
              match: hit.allTerms ? ("all_terms" as const) : ("some_terms" as const)
            }))
          }
        }, Tracing.span("Knowledge.search"))

        return Knowledge.of({ list, get, chunks, create, refresh, update, remove, search })
      })
    )
}

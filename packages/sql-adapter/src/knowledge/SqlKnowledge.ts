import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { type Hit, KnowledgeRepo } from "@leadline/core/knowledge/KnowledgeRepo"
import type {
  KnowledgeChunk,
  KnowledgeSource,
  KnowledgeSourceWithContent,
  SourceFilter
} from "@leadline/core/knowledge/Source"
import { Conflict } from "@leadline/core/Errors"
import { iso, orDie, textArray } from "../internal/store.ts"

interface SourceRow {
  readonly id: string
  readonly kind: KnowledgeSource["kind"]
  readonly title: string
  readonly url: string | null
  readonly language: KnowledgeSource["language"]
  readonly status: KnowledgeSource["status"]
  readonly error: string | null
  readonly content?: string
  readonly char_count: unknown
  readonly chunk_count: unknown
  readonly content_sha256: string | null
  readonly embedding_status: KnowledgeSource["embedding_status"]
  readonly created_at: unknown
  readonly updated_at: unknown
}

interface ChunkRow {
  readonly id: string
  readonly source_id: string
  readonly position: unknown
  readonly heading: string | null
  readonly text: string
}

const toSource = (row: SourceRow): KnowledgeSource => ({
  id: row.id,
  kind: row.kind,
  title: row.title,
  url: row.url,
  language: row.language,
  status: row.status,
  error: row.error,
  char_count: Number(row.char_count),
  chunk_count: Number(row.chunk_count),
  content_sha256: row.content_sha256,
  embedding_status: row.embedding_status,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

const toSourceWithContent = (row: SourceRow): KnowledgeSourceWithContent => ({
  ...toSource(row),
  content: row.content ?? ""
})

const toChunk = (row: ChunkRow): KnowledgeChunk => ({
  id: row.id,
  source_id: row.source_id,
  position: Number(row.position),
  heading: row.heading,
  text: row.text
})

const LISTED =
  "id, kind, title, url, language, status, error, char_count, chunk_count, content_sha256, embedding_status, created_at, updated_at"

/** The chunks as one JSON parameter: one statement for all of a source's chunks, nulls kept. */
const chunksJson = (chunks: ReadonlyArray<KnowledgeChunk>) =>
  JSON.stringify(chunks.map((c) => ({ id: c.id, position: c.position, heading: c.heading, text: c.text })))

export const layer = Layer.effect(
  KnowledgeRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const listed = sql.unsafe(LISTED)

    const insertChunks = (
      accountId: string,
      source: KnowledgeSourceWithContent,
      chunks: ReadonlyArray<KnowledgeChunk>
    ) =>
      chunks.length === 0
        ? Effect.void
        : orDie(sql`
            INSERT INTO knowledge_chunks (account_id, id, source_id, position, heading, text, language)
            SELECT ${accountId}::uuid, c.id, ${source.id}, c.position, c.heading, c.text, ${source.language}::regconfig
            FROM jsonb_to_recordset(${chunksJson(chunks)}::jsonb) AS c(id text, position int, heading text, text text)`).pipe(
            Effect.asVoid
          )

    const oneWithContent = (statement: Effect.Effect<ReadonlyArray<SourceRow>, any>) =>
      orDie(statement).pipe(Effect.map(([row]) => (row === undefined ? undefined : toSourceWithContent(row))))

    return KnowledgeRepo.of({
      insert: (accountId, s, chunks) =>
        Effect.gen(function* () {
          // ON CONFLICT instead of catching the violation: a failed statement would poison the transaction.
          const inserted = yield* orDie(sql<{ id: string }>`
            INSERT INTO knowledge_sources (account_id, ${listed}, content)
            VALUES (${accountId}::uuid, ${s.id}, ${s.kind}, ${s.title}, ${s.url}, ${s.language}, ${s.status}, ${s.error},
                    ${s.char_count}::int, ${s.chunk_count}::int, ${s.content_sha256}, ${s.embedding_status},
                    ${s.created_at}::timestamptz, ${s.updated_at}::timestamptz, ${s.content})
            ON CONFLICT (account_id, url) WHERE url IS NOT NULL DO NOTHING
            RETURNING id`)
          if (inserted.length === 0) {
            return yield* new Conflict({ message: `A knowledge source of ${s.url} already exists` })
          }
          yield* insertChunks(accountId, s, chunks)
        }),
      count: (accountId) =>
        orDie(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM knowledge_sources WHERE account_id = ${accountId}::uuid`
        ).pipe(Effect.map(([row]) => row?.n ?? 0)),
      list: (accountId, filter: SourceFilter, page) => {
        const where = sql.and([
          sql`account_id = ${accountId}::uuid`,
          ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`])
        ])
        return orDie(
          Effect.all(
            [
              sql<SourceRow>`SELECT ${listed} FROM knowledge_sources WHERE ${where}
                             ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
              sql<{ total: number }>`SELECT count(*)::int AS total FROM knowledge_sources WHERE ${where}`
            ],
            { concurrency: "unbounded" }
          )
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(toSource), total: count?.total ?? 0 })))
      },
      find: (accountId, id) =>
        oneWithContent(
          sql<SourceRow>`SELECT ${listed}, content FROM knowledge_sources WHERE account_id = ${accountId}::uuid AND id = ${id}`
        ),
      findForUpdate: (accountId, id) =>
        oneWithContent(
          sql<SourceRow>`SELECT ${listed}, content FROM knowledge_sources
                         WHERE account_id = ${accountId}::uuid AND id = ${id} FOR UPDATE`
        ),
      update: (accountId, s, chunks) =>
        Effect.gen(function* () {
          yield* orDie(sql`
            UPDATE knowledge_sources SET title = ${s.title}, url = ${s.url}, status = ${s.status}, error = ${s.error}, fetch_lease_until = NULL,
              content = ${s.content}, char_count = ${s.char_count}::int, chunk_count = ${s.chunk_count}::int,
              content_sha256 = ${s.content_sha256}, embedding_status = ${s.embedding_status},
              updated_at = ${s.updated_at}::timestamptz
            WHERE account_id = ${accountId}::uuid AND id = ${s.id}`)
          if (chunks !== undefined) {
            yield* orDie(
              sql`DELETE FROM knowledge_chunks WHERE account_id = ${accountId}::uuid AND source_id = ${s.id}`
            )
            yield* insertChunks(accountId, s, chunks)
          }
        }),
      remove: (accountId, id) =>
        oneWithContent(
          sql<SourceRow>`DELETE FROM knowledge_sources WHERE account_id = ${accountId}::uuid AND id = ${id}
                         RETURNING ${listed}, content`
        ),
      chunks: (accountId, sourceId, page) =>
        orDie(
          Effect.all(
            [
              sql<ChunkRow>`SELECT id, source_id, position, heading, text FROM knowledge_chunks
                            WHERE account_id = ${accountId}::uuid AND source_id = ${sourceId}
                            ORDER BY position LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
              sql<{ total: number }>`SELECT count(*)::int AS total FROM knowledge_chunks
                                     WHERE account_id = ${accountId}::uuid AND source_id = ${sourceId}`
            ],
            { concurrency: "unbounded" }
          )
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(toChunk), total: count?.total ?? 0 }))),
      search: (accountId, request) => {
        const ids = request.sourceIds
        const inSources = (column: string) =>
          ids === undefined ? sql`TRUE` : sql`${sql.unsafe(column)} = ANY(${textArray(ids)}::text[])`
        /**
         * One tier of the search (docs/contract-commerce-ai.md §4). `websearch_to_tsquery` ANDs every term, so
         * a natural question rarely matches whole; the OR of its lexemes finds the candidates, and those
         * with every term rank first. Ranking every chunk with any term costs in proportion to how many
         * there are (tens of thousands for a common word in a large base), so the first tier takes only
         * the chunks with at least two of the question's terms (the OR of every pair, from the GIN
         * index), and the chunks with one come second, when the first found too few. The queries are
         * built from PostgreSQL's own lexemes (quoted for tsquery), so no text of the question is
         * parsed as query syntax. One query per language of the searched sources; the headline is made
         * for the returned rows only, from the chunk's body (its `Section:` line is the heading).
         */
        const tier = (candidates: "pairs" | "loose", limit: number, found: ReadonlyArray<string>) =>
          orDie(
            sql<ChunkRow & { source_title: string; rank: number; all_terms: boolean; snippet: string }>`
              WITH l AS (
                SELECT DISTINCT language::regconfig AS cfg FROM knowledge_sources
                WHERE account_id = ${accountId}::uuid AND ${inSources("id")}
              ), lexemes AS (
                SELECT l.cfg, x.lexeme, x.i,
                       -- tsquery's quoting: inside quotes, a backslash escapes and a quote is doubled.
                       chr(39) || replace(replace(x.lexeme, chr(92), chr(92) || chr(92)), chr(39), chr(39) || chr(39))
                         || chr(39) AS quoted
                FROM l, unnest(tsvector_to_array(to_tsvector(l.cfg, ${request.query}))) WITH ORDINALITY AS x(lexeme, i)
              ), q AS (
                SELECT l.cfg,
                       websearch_to_tsquery(l.cfg, ${request.query}) AS strict,
                       (SELECT string_agg(quoted, ' | ') FROM lexemes WHERE lexemes.cfg = l.cfg)::tsquery AS loose,
                       (SELECT string_agg(a.quoted || ' & ' || b.quoted, ' | ')
                        FROM lexemes AS a JOIN lexemes AS b ON a.cfg = b.cfg AND a.i < b.i
                        WHERE a.cfg = l.cfg)::tsquery AS pairs
                FROM l
              ), hits AS (
                SELECT c.id, c.source_id, c.position, c.heading, c.text, q.cfg, q.loose,
                       ts_rank_cd(c.tsv, q.loose) AS rank, (c.tsv @@ q.strict) AS all_terms
                FROM knowledge_chunks AS c JOIN q ON c.language = q.cfg
                WHERE c.account_id = ${accountId}::uuid AND ${inSources("c.source_id")}
                  AND c.tsv @@ ${candidates === "pairs" ? sql`q.pairs` : sql`q.loose`}
                  AND c.id <> ALL(${textArray(found)}::text[])
                ORDER BY all_terms DESC, rank DESC, c.id
                LIMIT ${limit}::int
              )
              SELECT h.id, h.source_id, h.position, h.heading, h.text, h.rank::float8 AS rank, h.all_terms,
                     s.title AS source_title,
                     ts_headline(h.cfg, regexp_replace(h.text, '^Section: [^\n]*\n\n', ''), h.loose,
                                 'MaxFragments=1,MaxWords=30,MinWords=10') AS snippet
              FROM hits AS h JOIN knowledge_sources AS s ON s.account_id = ${accountId}::uuid AND s.id = h.source_id
              ORDER BY h.all_terms DESC, h.rank DESC, h.id`
          ).pipe(
            Effect.map((rows) =>
              rows.map(
                (row): Hit => ({
                  chunk: toChunk(row),
                  sourceTitle: row.source_title,
                  allTerms: row.all_terms,
                  rank: Number(row.rank),
                  snippet: row.snippet
                })
              )
            )
          )
        return Effect.gen(function* () {
          const first = yield* tier("pairs", request.limit, [])
          if (first.length >= request.limit) return first
          const rest = yield* tier(
            "loose",
            request.limit - first.length,
            first.map((hit) => hit.chunk.id)
          )
          return [...first, ...rest]
        })
      },
      findByUrl: (accountId, url) =>
        orDie(
          sql<SourceRow>`SELECT ${listed} FROM knowledge_sources WHERE account_id = ${accountId}::uuid AND url = ${url}`
        ).pipe(Effect.map(([row]) => (row === undefined ? undefined : toSource(row)))),
      claimFetches: (now, leaseUntil, limit) =>
        orDie(sql<SourceRow & { account_id: string }>`
          WITH due AS (
            SELECT account_id, id FROM knowledge_sources
            WHERE status = 'processing' AND kind = 'url'
              AND (fetch_lease_until IS NULL OR fetch_lease_until <= ${now}::timestamptz)
            ORDER BY updated_at
            LIMIT ${limit}::int
            FOR UPDATE SKIP LOCKED
          )
          UPDATE knowledge_sources AS s SET fetch_lease_until = ${leaseUntil}::timestamptz
          FROM due WHERE s.account_id = due.account_id AND s.id = due.id
          RETURNING s.account_id::text AS account_id, ${sql.unsafe(
            LISTED.split(", ")
              .map((c) => `s.${c}`)
              .join(", ")
          )}, s.content`).pipe(
          Effect.map((rows) => rows.map((row) => ({ accountId: row.account_id, source: toSourceWithContent(row) })))
        ),
      existing: (accountId, ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : orDie(
              sql<{ id: string }>`SELECT id FROM knowledge_sources
                                  WHERE account_id = ${accountId}::uuid AND id = ANY(${textArray(ids)}::text[])`
            ).pipe(Effect.map((rows) => rows.map((row) => row.id)))
    })
  })
)

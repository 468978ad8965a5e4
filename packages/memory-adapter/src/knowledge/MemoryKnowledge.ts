import { Effect, Layer } from "effect"
import { type Hit, KnowledgeRepo } from "@leadline/core/knowledge/KnowledgeRepo"
import { Conflict } from "@leadline/core/Errors"
import { type KnowledgeChunk, type KnowledgeSourceWithContent, withoutContent } from "@leadline/core/knowledge/Source"
import * as MemoryLocks from "../MemoryLocks.ts"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically, type Tx } from "../MemoryTransaction.ts"

interface SourceRow {
  readonly accountId: string
  readonly source: KnowledgeSourceWithContent
  /** Until when a fetcher holds this `processing` url source. */
  readonly leaseUntil: string | null
}

interface ChunkRow {
  readonly accountId: string
  readonly chunk: KnowledgeChunk
}

// A small stop list and a crude suffix strip: the memory store's search finds the chunks that share
// words with the query and ranks those with every word first, as SQL's does, but it is no stemmer
// and no ranking function. Relevance is measured on the SQL wirings; this one serves embedding and
// fast tests.
const STOP_WORDS = new Set(
  "a an and are as at be by can do does for from how i if in is it my of on or our the to we what when where which who why will with you your".split(
    " "
  )
)

const stem = (word: string) => {
  let stemmed = word
  if (stemmed.length > 5 && stemmed.endsWith("ing")) stemmed = stemmed.slice(0, -3)
  else if (stemmed.length > 4 && (stemmed.endsWith("ed") || stemmed.endsWith("es"))) stemmed = stemmed.slice(0, -2)
  else if (stemmed.length > 3 && stemmed.endsWith("s") && !stemmed.endsWith("ss")) stemmed = stemmed.slice(0, -1)
  // "shipping" and "ships" both end as "ship".
  return /([^aeiou])\1$/u.test(stemmed) ? stemmed.slice(0, -1) : stemmed
}

const terms = (text: string): ReadonlyArray<string> =>
  (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => !STOP_WORDS.has(word)).map(stem)

const SNIPPET_WORDS = 30

/** A chunk's text without its `Section:` line: the passage a snippet quotes. */
const bodyOf = (text: string) => text.replace(/^Section: [^\n]*\n\n/, "")

/** Up to 30 words from the first matched one, matched words in `<b>…</b>` as `ts_headline` marks them. */
const snippetOf = (text: string, wanted: ReadonlySet<string>): string => {
  const words = text.split(/\s+/).filter((word) => word.length > 0)
  const matched = (word: string) => terms(word).some((term) => wanted.has(term))
  let first = Math.max(0, words.findIndex(matched))
  // Back to the start of its sentence (at most 10 words), as a headline reads better from there.
  for (let back = 0; back < 10 && first > 0 && !/[.!?:]$/.test(words[first - 1]!); back++) first--
  return words
    .slice(first, first + SNIPPET_WORDS)
    .map((word) => (matched(word) ? `<b>${word}</b>` : word))
    .join(" ")
}

/** Sources and chunks by account; a source's chunks are written and removed in the same step as it. */
export const layer = Layer.sync(KnowledgeRepo)(() => {
  const sources = MemoryTable.make({
    primaryKey: (row: SourceRow) => MemoryTable.key(row.accountId, row.source.id),
    unique: { url: (row) => (row.source.url === null ? undefined : MemoryTable.key(row.accountId, row.source.url)) },
    indexes: { account: (row) => row.accountId },
    order: MemoryTable.newestFirst(
      (row: SourceRow) => row.source.created_at,
      (row) => row.source.id
    )
  })
  const chunks = MemoryTable.make({
    primaryKey: (row: ChunkRow) => MemoryTable.key(row.accountId, row.chunk.id),
    indexes: {
      source: (row) => MemoryTable.key(row.accountId, row.chunk.source_id),
      account: (row) => row.accountId
    },
    order: MemoryTable.ascending((row: ChunkRow) => row.chunk.position)
  })
  const locks = MemoryLocks.make()
  const find = (accountId: string, id: string) => sources.get(MemoryTable.key(accountId, id))?.source

  const replaceChunks = (tx: Tx, accountId: string, sourceId: string, next: ReadonlyArray<KnowledgeChunk>) => {
    const old = [...chunks.scan("source", MemoryTable.key(accountId, sourceId))]
    for (const row of old) chunks.remove(tx, MemoryTable.key(accountId, row.chunk.id))
    for (const chunk of next) chunks.insert(tx, { accountId, chunk })
  }

  return KnowledgeRepo.of({
    insert: (accountId, source, rows) =>
      Effect.flatMap(
        atomically((tx) => {
          const taken = sources.insert(tx, { accountId, source, leaseUntil: null })
          if (taken instanceof MemoryTable.Violation) return taken
          replaceChunks(tx, accountId, source.id, rows)
          return undefined
        }),
        (taken) =>
          taken === undefined
            ? Effect.void
            : Effect.fail(new Conflict({ message: `A knowledge source of ${source.url} already exists` }))
      ),
    count: (accountId) => Effect.sync(() => [...sources.scan("account", accountId)].length),
    list: (accountId, filter, page) =>
      Effect.sync(() => {
        const slice = sources.page(
          "account",
          accountId,
          page,
          filter.status === undefined ? undefined : (row) => row.source.status === filter.status
        )
        return { items: slice.items.map((row) => withoutContent(row.source)), total: slice.total }
      }),
    find: (accountId, id) => Effect.sync(() => find(accountId, id)),
    findForUpdate: (accountId, id) =>
      Effect.andThen(
        locks.lock(MemoryTable.key(accountId, id)),
        Effect.sync(() => find(accountId, id))
      ),
    update: (accountId, source, rows) =>
      atomically((tx) => {
        sources.update(tx, { accountId, source, leaseUntil: null })
        if (rows !== undefined) replaceChunks(tx, accountId, source.id, rows)
      }),
    remove: (accountId, id) =>
      atomically((tx) => {
        const removed = sources.remove(tx, MemoryTable.key(accountId, id))
        if (removed !== undefined) replaceChunks(tx, accountId, id, [])
        return removed?.source
      }),
    chunks: (accountId, sourceId, page) =>
      Effect.sync(() => {
        const slice = chunks.page("source", MemoryTable.key(accountId, sourceId), page)
        return { items: slice.items.map((row) => row.chunk), total: slice.total }
      }),
    search: (accountId, request) =>
      Effect.sync(() => {
        const wanted = new Set(terms(request.query))
        if (wanted.size === 0) return []
        const only = request.sourceIds === undefined ? undefined : new Set(request.sourceIds)
        const hits: Array<Hit> = []
        for (const row of chunks.scan("account", accountId)) {
          if (only !== undefined && !only.has(row.chunk.source_id)) continue
          const found = terms(row.chunk.text)
          const present = new Set(found.filter((term) => wanted.has(term)))
          if (present.size === 0) continue
          const occurrences = found.filter((term) => wanted.has(term)).length
          hits.push({
            chunk: row.chunk,
            sourceTitle: find(accountId, row.chunk.source_id)?.title ?? "",
            allTerms: present.size === wanted.size,
            rank: present.size / wanted.size + occurrences / (10 * found.length),
            snippet: snippetOf(bodyOf(row.chunk.text), wanted)
          })
        }
        return hits
          .sort(
            (a, b) =>
              Number(b.allTerms) - Number(a.allTerms) ||
              b.rank - a.rank ||
              (a.chunk.id < b.chunk.id ? -1 : a.chunk.id > b.chunk.id ? 1 : 0)
          )
          .slice(0, request.limit)
      }),
    findByUrl: (accountId, url) =>
      Effect.sync(() => {
        const source = sources.find("url", MemoryTable.key(accountId, url))?.source
        return source === undefined ? undefined : withoutContent(source)
      }),
    // One synchronous step: no other claim sees the source between the check and the lease.
    claimFetches: (now, leaseUntil, limit) =>
      atomically((tx) =>
        [...sources.rows()]
          .filter(
            (row) =>
              row.source.kind === "url" &&
              row.source.status === "processing" &&
              (row.leaseUntil === null || row.leaseUntil <= now)
          )
          .slice(0, limit)
          .map((row) => {
            sources.update(tx, { ...row, leaseUntil })
            return { accountId: row.accountId, source: row.source }
          })
      ),
    existing: (accountId, ids) => Effect.sync(() => ids.filter((id) => find(accountId, id) !== undefined))
  })
})

import { Clock, Context, Duration, Effect, Layer, Schedule } from "effect"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import { Transactor } from "../Transactor.ts"
import * as Versioned from "../Versioned.ts"
import * as Chunking from "./Chunking.ts"
import * as KnowledgeEvents from "./KnowledgeEvents.ts"
import { KnowledgeRepo } from "./KnowledgeRepo.ts"
import { FETCH_TIMEOUT_MILLIS, PageFetcher } from "./PageFetcher.ts"
import { type KnowledgeChunk, type KnowledgeSourceWithContent, MAX_CONTENT_CHARS, withoutContent } from "./Source.ts"

/** A fetch that dies is taken up again after its lease: well past the fetch's own timeout. */
const LEASE_MILLIS = 6 * FETCH_TIMEOUT_MILLIS
const BATCH = 4

const encoder = new TextEncoder()
const sha256 = (text: string): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", encoder.encode(text))).pipe(
    Effect.map((digest) => Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join(""))
  )

/**
 * Fetches `url` sources (CONTRACT-COMMERCE-AI §4): claims the `processing` ones, fetches each page
 * outside any transaction, then in one transaction (the source read again, locked: it may have
 * been deleted or refreshed meanwhile) stores its text and chunks as `ready`, or `failed` with why,
 * and emits `knowledge.updated` with `previous_attributes`.
 */
export class SourceFetcher extends Context.Service<SourceFetcher, { readonly runOnce: Effect.Effect<number> }>()(
  "core/SourceFetcher"
) {
  static readonly layer: Layer.Layer<SourceFetcher, never, KnowledgeRepo | Transactor | Outbox> = Layer.effect(
    SourceFetcher,
    Effect.gen(function* () {
      const repo = yield* KnowledgeRepo
      const transactor = yield* Transactor
      const outbox = yield* Outbox
      const fetcher = yield* PageFetcher

      const finish = Effect.fnUntraced(function* (accountId: string, claimed: KnowledgeSourceWithContent) {
        const fetched = yield* fetcher.fetch(claimed.url!).pipe(Effect.result)
        const now = yield* Ids.now
        let text = ""
        let chunks: ReadonlyArray<KnowledgeChunk> = []
        let error: string | null = null
        if (fetched._tag === "Success") {
          text = fetched.success.text.slice(0, MAX_CONTENT_CHARS)
          if (text.trim().length === 0) error = "the page has no text"
          else {
            for (const piece of Chunking.chunk(text, fetched.success.kind)) {
              chunks = [...chunks, { id: yield* Ids.make("kc"), source_id: claimed.id, ...piece }]
            }
          }
        } else error = fetched.failure.message
        const hash = error === null ? yield* sha256(text) : null
        yield* transactor.withTransaction(
          Effect.gen(function* () {
            const current = yield* repo.findForUpdate(accountId, claimed.id)
            // Deleted, or refreshed and fetched by another meanwhile: this fetch is stale.
            if (current === undefined || current.status !== "processing") return
            const next: KnowledgeSourceWithContent =
              error === null
                ? {
                    ...current,
                    status: "ready",
                    error: null,
                    content: text,
                    char_count: text.length,
                    chunk_count: chunks.length,
                    content_sha256: hash,
                    updated_at: now
                  }
                : { ...current, status: "failed", error, updated_at: now }
            yield* repo.update(accountId, next, error === null ? chunks : undefined)
            const shown = withoutContent(next)
            yield* emit(
              KnowledgeEvents.updated,
              shown,
              Versioned.previousAttributes(withoutContent(current), shown)
            ).pipe(
              Effect.provideService(Outbox, outbox),
              Effect.provideService(CurrentPrincipal, systemPrincipal(accountId, "knowledge"))
            )
          })
        )
      })

      const runOnce = Effect.gen(function* () {
        const at = yield* Clock.currentTimeMillis
        const claimed = yield* repo.claimFetches(
          new Date(at).toISOString(),
          new Date(at + LEASE_MILLIS).toISOString(),
          BATCH
        )
        yield* Effect.forEach(
          claimed,
          ({ accountId, source }) =>
            finish(accountId, source).pipe(
              Effect.catchCause((cause) => Effect.logWarning(`Fetching knowledge source ${source.id} failed`, cause))
            ),
          { concurrency: BATCH, discard: true }
        )
        return claimed.length
      }).pipe(Effect.withSpan("SourceFetcher.runOnce"))

      return SourceFetcher.of({ runOnce })
    })
  )
}

/** Runs the fetcher every `intervalMillis` for the life of the layer (in the server, or a worker process). */
export const loop = (options: { readonly intervalMillis?: number | undefined } = {}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const fetcher = yield* SourceFetcher
      const round = fetcher.runOnce.pipe(
        Effect.catchCause((cause) => Effect.logWarning("Fetching knowledge sources failed", cause))
      )
      yield* Effect.forkScoped(Effect.repeat(round, Schedule.spaced(Duration.millis(options.intervalMillis ?? 1_000))))
    })
  )

import { Clock, Context, Effect, Layer } from "effect"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import * as Loop from "../internal/loop.ts"
import { Transactor } from "../Transactor.ts"
import * as Versioned from "../Versioned.ts"
import * as KnowledgeEvents from "./KnowledgeEvents.ts"
import { KnowledgeRepo } from "./KnowledgeRepo.ts"
import * as SourceContent from "./SourceContent.ts"
import { FETCH_TIMEOUT_MILLIS, PageFetcher } from "./PageFetcher.ts"
import { type KnowledgeSourceWithContent, MAX_CONTENT_CHARS, withoutContent } from "./Source.ts"

/** A fetch that dies is taken up again after its lease: well past the fetch's own timeout. */
const LEASE_MILLIS = 6 * FETCH_TIMEOUT_MILLIS
const BATCH = 4

/**
 * Fetches `url` sources (docs/contract-commerce-ai.md §4): claims the `processing` ones, fetches each page
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
        const text = fetched._tag === "Success" ? fetched.success.text.slice(0, MAX_CONTENT_CHARS) : ""
        const error =
          fetched._tag === "Failure"
            ? fetched.failure.message
            : text.trim().length === 0
              ? "the page has no text"
              : null
        const prepared =
          error === null && fetched._tag === "Success"
            ? yield* SourceContent.prepare(claimed.id, fetched.success.kind, text)
            : undefined
        yield* transactor.withTransaction(
          Effect.gen(function* () {
            const current = yield* repo.findForUpdate(accountId, claimed.id)
            // Deleted, or refreshed and fetched by another meanwhile: this fetch is stale.
            if (current === undefined || current.status !== "processing") return
            const next: KnowledgeSourceWithContent =
              prepared === undefined
                ? { ...current, status: "failed", error, updated_at: now }
                : { ...current, status: "ready", error: null, ...prepared.fields, updated_at: now }
            yield* repo.update(accountId, next, prepared?.chunks)
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
    Effect.flatMap(SourceFetcher, (fetcher) =>
      Loop.every("Fetching knowledge sources", options.intervalMillis ?? 1_000, fetcher.runOnce)
    )
  )

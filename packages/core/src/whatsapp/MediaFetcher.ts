import { Cause, Clock, Data, Effect, Layer, Queue, Random, Stream } from "effect"
import * as Ids from "../Ids.ts"
import * as Digest from "../internal/digest.ts"
import * as Loop from "../internal/loop.ts"
import type { InboundMedia } from "../messages/Message.ts"
import { keyOf, MediaStore } from "../messages/MediaStore.ts"
import { type Download, MediaDownloader, MediaFailure } from "./MediaDownloader.ts"
import * as MediaLimits from "../messages/MediaLimits.ts"
import { type ClaimedMedia, MediaQueue } from "./MediaQueue.ts"

export interface Options {
  /** The most bytes kept per type (Meta's limits unless set). */
  readonly limits?: MediaLimits.Limits | undefined
  /** How long a claim holds a file (5 min: a 100 MB document on a slow link). */
  readonly leaseMillis?: number | undefined
  /** Files fetched at once (32): the pool is refilled as they finish. */
  readonly batch?: number | undefined
  /** The fallback poll when no wake-up comes (5 s). */
  readonly pollMillis?: number | undefined
  /** The first retry's delay, doubled on each one after it up to 5 min (2 s). */
  readonly retryBaseMillis?: number | undefined
  /** Attempts before a file that keeps failing for now ends `failed` (8). */
  readonly maxAttempts?: number | undefined
}

/** Why a file ends `failed` (docs/contract-messaging.md §5.8). */
export type Reason = "too_large" | "media_gone" | "checksum_mismatch" | "download_failed"

class Refused extends Data.TaggedError("Refused")<{ readonly reason: Reason; readonly message: string }> {}

/**
 * The bytes as the store takes them: counted and hashed as they pass, failing the stream (so the
 * store keeps nothing) past the type's limit or when the digest is not WhatsApp's.
 */
const checked = (
  bytes: Stream.Stream<Uint8Array, MediaFailure>,
  limit: number,
  expectedHex: string | undefined,
  done: (sha256Hex: string | undefined, size: number) => void
): Stream.Stream<Uint8Array, MediaFailure | Refused> =>
  Stream.suspend(() => {
    const hash = Digest.sha256()
    let size = 0
    return bytes.pipe(
      Stream.mapEffect((chunk) => {
        size += chunk.length
        if (size > limit) {
          return Effect.fail(new Refused({ reason: "too_large", message: `more than ${limit} bytes` }))
        }
        hash?.update(chunk)
        return Effect.succeed(chunk)
      }),
      Stream.concat(
        Stream.suspend(() => {
          const actual = hash?.hex()
          if (expectedHex !== undefined && actual !== undefined && actual !== expectedHex) {
            return Stream.fail(
              new Refused({ reason: "checksum_mismatch", message: `SHA-256 ${actual}, WhatsApp said ${expectedHex}` })
            )
          }
          done(actual, size)
          return Stream.empty
        })
      )
    )
  })

/** 2^(attempts-1) times the base, up to 5 min, ±10 %. */
const backoffMillis = (base: number, attempts: number, jitter: number) =>
  Math.min(base * 2 ** (attempts - 1), 300_000) * (0.9 + 0.2 * jitter)

/**
 * Fetches inbound files (docs/contract-messaging.md §5.8): claims pending ones, downloads each
 * through `MediaDownloader` outside any transaction, streams it into `MediaStore` while checking
 * its size and WhatsApp's SHA-256, and writes the message's media `stored` or `failed` with why.
 * Rate limits, 5xx and failed connections are retried with a growing delay, a bounded number of
 * times; a media id WhatsApp no longer has ends `failed` at once, so no file stays `pending`.
 */
export const layer = (options: Options = {}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const queue = yield* MediaQueue
      const downloader = yield* MediaDownloader
      const store = yield* MediaStore
      const worker = yield* Ids.make("mdf")
      const limits = options.limits ?? MediaLimits.defaults
      const leaseMillis = options.leaseMillis ?? 300_000
      const batch = options.batch ?? 32
      const retryBaseMillis = options.retryBaseMillis ?? 2_000
      const maxAttempts = options.maxAttempts ?? 8

      const end = (claimed: ClaimedMedia, media: InboundMedia) =>
        Effect.flatMap(Ids.now, (now) => queue.finish(claimed.accountId, claimed.messageId, media, now))

      const failed = (claimed: ClaimedMedia, reason: Reason) =>
        end(claimed, { ...claimed.media, state: "failed", reason, size: null })

      const keep = (claimed: ClaimedMedia, download: Download, limit: number) =>
        Effect.gen(function* () {
          const given = claimed.media.sha256 ?? download.sha256
          const expected = given === null ? undefined : Digest.sha256Hex(given)
          let digest: string | undefined
          const size = yield* store.put(
            keyOf(claimed.accountId, claimed.messageId),
            download.mimeType ?? claimed.media.mime_type ?? "application/octet-stream",
            checked(download.bytes, limit, expected, (actual) => {
              digest = actual
            })
          )
          yield* end(claimed, {
            ...claimed.media,
            mime_type: claimed.media.mime_type ?? download.mimeType,
            // The ETag of GET …/media: WhatsApp's checksum as hex, or ours when it gave none.
            sha256: expected ?? digest ?? given,
            state: "stored",
            reason: null,
            size
          })
        })

      const fetchOne = (claimed: ClaimedMedia) =>
        Effect.gen(function* () {
          const limit = MediaLimits.limitOf(limits, claimed.type)
          const outcome = yield* Effect.gen(function* () {
            const download = yield* downloader.download(claimed.channel, claimed.media.provider_media_id)
            // Meta says the size first: a file over the limit is not downloaded at all.
            if (download.fileSize !== null && download.fileSize > limit) {
              return yield* new Refused({ reason: "too_large", message: `${download.fileSize} bytes` })
            }
            yield* keep(claimed, download, limit)
          }).pipe(Effect.result)
          if (outcome._tag === "Success") return
          const failure = outcome.failure
          if (failure._tag === "Refused") return yield* failed(claimed, failure.reason)
          if (failure.kind === "gone") return yield* failed(claimed, "media_gone")
          if (failure.kind === "retryable" && claimed.attempts < maxAttempts) {
            const delay = backoffMillis(retryBaseMillis, claimed.attempts, yield* Random.next)
            yield* Effect.logInfo(`Fetching media of ${claimed.messageId} failed (${failure.message}); retried`)
            return yield* queue.retryLater(
              claimed.accountId,
              claimed.messageId,
              (yield* Clock.currentTimeMillis) + delay
            )
          }
          yield* Effect.logWarning(`Fetching media of ${claimed.messageId} failed: ${failure.message}`)
          return yield* failed(claimed, "download_failed")
        })

      // A pool of `batch` files in flight, refilled as files finish rather than batch by batch, so
      // one slow download does not hold up the fifteen behind it.
      const scope = yield* Effect.scope
      let inFlight = 0
      const freed = yield* Queue.sliding<void>(1)
      const fetchInPool = (one: ClaimedMedia) =>
        // A defect (the store away) leaves the file claimed: its lease runs out and it is tried again.
        (one.attempts > maxAttempts ? failed(one, "download_failed") : fetchOne(one)).pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterrupts(cause)
              ? Effect.interrupt
              : Effect.logWarning(`Fetching media of ${one.messageId} failed`, cause)
          ),
          Effect.ensuring(
            Effect.suspend(() => {
              inFlight--
              return Queue.offer(freed, undefined)
            })
          )
        )

      // Claims while the queue has due files, whenever at least half the pool is free (one query
      // per few files, not one per file); ends when the queue has none due.
      const drain = Effect.gen(function* () {
        while (true) {
          const free = batch - inFlight
          if (free < Math.ceil(batch / 2)) {
            yield* Queue.take(freed)
            continue
          }
          const claimed = yield* queue
            .claim(worker, yield* Clock.currentTimeMillis, leaseMillis, free)
            .pipe(Effect.withSpan("MediaFetcher.claim"))
          for (const one of claimed) {
            inFlight++
            yield* Effect.forkIn(fetchInPool(one), scope)
          }
          if (claimed.length < free) return
        }
      })
      yield* Loop.woken("Fetching media", options.pollMillis ?? 5_000, queue.wakeups, drain)
    })
  )

/** Every failure of a fetch's stream, for tests and adapters that classify their own. */
export type FetchFailure = MediaFailure | Refused
export { MediaFailure }

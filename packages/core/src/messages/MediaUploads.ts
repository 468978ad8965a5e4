import { Clock, Context, Data, Effect, Layer, Stream } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { type InvalidInput, invalidField, MediaTooLarge, NotFound, type PermissionDenied } from "../Errors.ts"
import * as Ids from "../Ids.ts"
import * as Digest from "../internal/digest.ts"
import * as Tracing from "../Tracing.ts"
import * as MediaLimits from "./MediaLimits.ts"
import { keyOf, MediaStore } from "./MediaStore.ts"
import type { Rejected, UploadRequest } from "./MessageTransport.ts"
import {
  CONTENT_TYPES,
  essence,
  isSendType,
  SEND_TYPES,
  type SendType,
  sendTypeOf,
  type UploadedMedia
} from "./UploadedMedia.ts"
import { UploadedMediaRepo } from "./UploadedMediaRepo.ts"

/** A part of a `multipart/form-data` upload, as the HTTP layer parses it (its bytes streamed). */
export type UploadPart<E> =
  | { readonly _tag: "Field"; readonly key: string; readonly value: string }
  | {
      readonly _tag: "File"
      readonly key: string
      readonly name: string
      readonly contentType: string
      readonly content: Stream.Stream<Uint8Array, E>
    }

/** The file a sent message names is gone from the store (a directory wiped by hand). */
export class FileMissing extends Data.TaggedError("FileMissing")<{ readonly mediaId: string }> {}

/**
 * Graph keeps an uploaded file 30 days; one uploaded longer ago than this is uploaded again. A day
 * short of Meta's 30, so that an id is never used in the hour it expires.
 */
export const GRAPH_MEDIA_MAX_AGE_MILLIS = 29 * 24 * 60 * 60 * 1000

const MAX_FILENAME = 240

const typeList = SEND_TYPES.map((type) => `"${type}"`).join(", ")

const article = (type: string) => (/^[aeiou]/.test(type) ? "an" : "a")

/**
 * Files uploaded to be sent (docs/contract-messaging.md §5.9): `upload` streams a multipart file
 * into the `MediaStore`, checked against the content types Meta sends and its type's limit, and
 * records it; `get` reads one. For the sender, `graphIdFor` answers Graph's id of a file on a
 * channel, uploading it once per channel (again after Graph's 30 days).
 */
export class MediaUploads extends Context.Service<
  MediaUploads,
  {
    readonly upload: <E>(
      parts: Stream.Stream<UploadPart<E>, E>
    ) => Effect.Effect<UploadedMedia, PermissionDenied | InvalidInput | MediaTooLarge | E, CurrentPrincipal>
    readonly get: (id: string) => Effect.Effect<UploadedMedia, PermissionDenied | NotFound, CurrentPrincipal>
    /** The largest file any type may be: what a body past the upload route's limit is told. */
    readonly largestBytes: number
    /** For the sender: no principal. `upload` hands the file to the provider (the transport's). */
    readonly graphIdFor: (
      accountId: string,
      mediaId: string,
      channelId: string,
      upload: (file: Omit<UploadRequest, "channel">) => Effect.Effect<string, Rejected>
    ) => Effect.Effect<string, Rejected | FileMissing>
  }
>()("core/MediaUploads") {
  static readonly layer = Layer.effect(
    MediaUploads,
    Effect.gen(function* () {
      const repo = yield* UploadedMediaRepo
      const store = yield* MediaStore
      const limits = yield* MediaLimits.Setting

      /**
       * The file part streamed into the store: counted and hashed on the way, failing (so the
       * store keeps nothing, and the body is read no further) past its type's limit.
       */
      const keep = <E>(
        accountId: string,
        file: Extract<UploadPart<E>, { readonly _tag: "File" }>,
        hint: SendType | undefined
      ) =>
        Effect.gen(function* () {
          const type = sendTypeOf(file.contentType)
          if (type === undefined) {
            return yield* invalidField(
              "file",
              `content type ${essence(file.contentType) || "(none)"} is not one WhatsApp sends; ${SEND_TYPES.map((t) => `${t}: ${CONTENT_TYPES[t].join(", ")}`).join("; ")}`
            )
          }
          if (hint !== undefined && hint !== type) {
            return yield* invalidField(
              "type",
              `${article(essence(file.contentType))} ${essence(file.contentType)} file is sent as ${article(type)} ${type}`
            )
          }
          const filename = file.name === "" ? null : file.name
          if (
            filename !== null &&
            (filename.length > MAX_FILENAME || !filename.isWellFormed() || filename.includes("\u0000"))
          ) {
            return yield* invalidField("file", `the filename must be at most ${MAX_FILENAME} characters of text`)
          }
          const limit = limits[type]
          const hash = Digest.sha256()
          let size = 0
          const counted = file.content.pipe(
            Stream.mapEffect((chunk) => {
              size += chunk.length
              if (size > limit) return Effect.fail(new MediaTooLarge({ type, limit }))
              hash?.update(chunk)
              return Effect.succeed(chunk)
            })
          )
          const id = yield* Ids.make("med")
          yield* store.put(keyOf(accountId, id), essence(file.contentType), counted)
          if (size === 0) {
            yield* store.remove(keyOf(accountId, id))
            return yield* invalidField("file", "must not be empty")
          }
          const media: UploadedMedia = {
            id,
            type,
            mime_type: essence(file.contentType),
            size,
            sha256: hash?.hex() ?? "",
            filename,
            created_at: new Date(yield* Clock.currentTimeMillis).toISOString()
          }
          return media
        })

      const upload = Effect.fnUntraced(function* <E>(parts: Stream.Stream<UploadPart<E>, E>) {
        const principal = yield* authorize("messages.send")
        const accountId = principal.accountId
        let hint: SendType | undefined
        let hintProblem: string | undefined
        let kept: UploadedMedia | undefined
        // Whatever fails after the file was kept leaves nothing behind.
        const discard = Effect.suspend(() =>
          kept === undefined ? Effect.void : store.remove(keyOf(accountId, kept.id))
        )
        const onType = (value: string) => {
          if (isSendType(value)) hint = value
          else hintProblem = `type must be one of ${typeList}`
        }
        yield* Stream.runForEach(parts, (part) =>
          Effect.gen(function* () {
            if (part._tag === "Field") {
              if (part.key === "type") onType(part.value)
              if (hintProblem !== undefined) return yield* invalidField("type", hintProblem)
              if (kept !== undefined && hint !== undefined && hint !== kept.type) {
                return yield* invalidField(
                  "type",
                  `${article(kept.mime_type)} ${kept.mime_type} file is sent as ${article(kept.type)} ${kept.type}`
                )
              }
              return
            }
            if (part.key !== "file") {
              return yield* invalidField(part.key, "the only file part is file")
            }
            if (kept !== undefined) return yield* invalidField("file", "one file per upload")
            kept = yield* keep(accountId, part, hint)
          })
        ).pipe(Effect.onError(() => discard))
        if (kept === undefined) return yield* invalidField("file", "a file part is required")
        yield* repo.insert(accountId, kept).pipe(Effect.onError(() => discard))
        return kept
      }, Tracing.span("MediaUploads.upload"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("messages.view")
        return (yield* repo.find(principal.accountId, id)) ?? (yield* new NotFound({ resource: "media", id }))
      }, Tracing.span("MediaUploads.get"))

      const graphIdFor = Effect.fnUntraced(function* (
        accountId: string,
        mediaId: string,
        channelId: string,
        upload: (file: Omit<UploadRequest, "channel">) => Effect.Effect<string, Rejected>
      ) {
        const now = yield* Clock.currentTimeMillis
        const known = yield* repo.graphUpload(accountId, mediaId, channelId)
        if (known !== undefined && now - Date.parse(known.uploadedAt) < GRAPH_MEDIA_MAX_AGE_MILLIS) {
          return known.graphMediaId
        }
        const media = yield* repo.find(accountId, mediaId)
        const stored = yield* store.get(keyOf(accountId, mediaId))
        if (media === undefined || stored === undefined) return yield* new FileMissing({ mediaId })
        const graphMediaId = yield* upload({
          type: media.type,
          contentType: media.mime_type,
          filename: media.filename,
          size: stored.size,
          bytes: stored.bytes
        })
        yield* repo.recordGraphUpload(accountId, mediaId, channelId, {
          graphMediaId,
          uploadedAt: new Date(now).toISOString()
        })
        return graphMediaId
      }, Tracing.span("MediaUploads.graphIdFor"))

      const largestBytes = Math.max(...SEND_TYPES.map((type) => limits[type]))
      return MediaUploads.of({ upload, get, graphIdFor, largestBytes })
    })
  )
}

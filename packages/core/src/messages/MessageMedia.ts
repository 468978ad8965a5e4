import { Context, Effect, Layer } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { NotFound, type PermissionDenied } from "../Errors.ts"
import * as Tracing from "../Tracing.ts"
import { MediaNotStored } from "../Errors.ts"
import { keyOf, MediaStore, type StoredMedia } from "./MediaStore.ts"
import { inboundMedia, sentMedia } from "./Message.ts"
import { UploadedMediaRepo } from "./UploadedMediaRepo.ts"
import { MessagesRepo } from "./MessagesRepo.ts"

/** A kept file with the tag a client caches it by: its SHA-256, hex. */
export interface MediaFile extends StoredMedia {
  readonly sha256: string
}

/**
 * Reading a message's file (docs/contract-messaging.md §5.8, §5.9), as reading the message is
 * (`messages.view`): what WhatsApp delivered once kept, or the upload an outbound message sent. An
 * unknown message, one without a file, or one sent by link is 404; an inbound file not kept is 409.
 */
export class MessageMedia extends Context.Service<
  MessageMedia,
  {
    readonly get: (
      messageId: string
    ) => Effect.Effect<MediaFile, PermissionDenied | NotFound | MediaNotStored, CurrentPrincipal>
  }
>()("core/MessageMedia") {
  static readonly layer = Layer.effect(
    MessageMedia,
    Effect.gen(function* () {
      const repo = yield* MessagesRepo
      const store = yield* MediaStore
      const uploads = yield* UploadedMediaRepo
      const get = Effect.fnUntraced(function* (messageId: string) {
        const principal = yield* authorize("messages.view")
        const message = yield* repo.find(principal.accountId, messageId)
        // Another account's message reads as an unknown one, as on GET /api/v1/messages/{id}.
        if (message === undefined) return yield* new NotFound({ resource: "message", id: messageId })
        // An outbound file sent from an upload: the uploaded bytes (a file sent by link was never here).
        const sent = sentMedia(message)
        if (sent !== null) {
          const upload = sent.media_id === null ? undefined : yield* uploads.find(principal.accountId, sent.media_id)
          const bytes = upload === undefined ? undefined : yield* store.get(keyOf(principal.accountId, upload.id))
          if (upload === undefined || bytes === undefined) {
            return yield* new NotFound({ resource: "message media", id: messageId })
          }
          return { ...bytes, sha256: upload.sha256 }
        }
        const media = inboundMedia(message)
        if (media === null) return yield* new NotFound({ resource: "message media", id: messageId })
        if (media.state !== "stored") {
          return yield* new MediaNotStored({ id: messageId, state: media.state, reason: media.reason })
        }
        const stored = yield* store.get(keyOf(principal.accountId, messageId))
        // Stored, yet gone from the store (a directory wiped by hand): as not kept, never a 500.
        if (stored === undefined)
          return yield* new MediaNotStored({ id: messageId, state: "failed", reason: "missing" })
        return { ...stored, sha256: media.sha256 ?? "" }
      }, Tracing.span("MessageMedia.get"))
      return MessageMedia.of({ get })
    })
  )
}

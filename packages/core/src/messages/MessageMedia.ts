import { Context, Effect, Layer } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { NotFound, type PermissionDenied } from "../Errors.ts"
import * as Tracing from "../Tracing.ts"
import { MediaNotStored } from "../Errors.ts"
import { keyOf, MediaStore, type StoredMedia } from "./MediaStore.ts"
import { inboundMedia } from "./Message.ts"
import { MessagesRepo } from "./MessagesRepo.ts"

/** A kept file with the tag a client caches it by: its SHA-256, hex. */
export interface MediaFile extends StoredMedia {
  readonly sha256: string
}

/**
 * Reading a message's kept file (docs/contract-messaging.md §5.8), as reading the message is
 * (`messages.view`): an unknown message or one without a file is 404, a file not kept is 409.
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
      const get = Effect.fnUntraced(function* (messageId: string) {
        const principal = yield* authorize("messages.view")
        const message = yield* repo.find(principal.accountId, messageId)
        // Another account's message reads as an unknown one, as on GET /api/v1/messages/{id}.
        if (message === undefined) return yield* new NotFound({ resource: "message", id: messageId })
        // An outbound file is read at GET /api/v1/media/{id}; this route serves what WhatsApp delivered.
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

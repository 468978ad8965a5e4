import { Effect } from "effect"
import type { Multipart } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { invalidField, MediaTooLarge } from "@leadline/core/Errors"
import { MediaUploads } from "@leadline/core/messages/MediaUploads"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

/** What the multipart parser refused, as the caller's error: a body past the route's limit is a 413. */
const refused = (error: Multipart.MultipartError, largest: number) => {
  switch (error.reason._tag) {
    case "FileTooLarge":
    case "BodyTooLarge":
      return new MediaTooLarge({ type: null, limit: largest })
    case "InternalError":
      return invalidField("file", "the upload was cut short")
    default:
      return invalidField("file", `not a readable multipart/form-data body (${error.reason._tag})`)
  }
}

export const layer = HttpApiBuilder.group(
  Api,
  "media",
  Effect.fnUntraced(function* (handlers) {
    const media = yield* MediaUploads
    return handlers
      .handle("upload", ({ payload }) =>
        wire(
          media
            .upload(payload)
            .pipe(Effect.catchTag("MultipartError", (error) => Effect.fail(refused(error, media.largestBytes))))
        ).pipe(Respond.created)
      )
      .handle("get", ({ params }) => wire(media.get(params.id)).pipe(Respond.ok))
  })
)

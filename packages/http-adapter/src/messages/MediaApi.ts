import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { MediaTooLarge } from "@leadline/core/Errors"
import { SEND_TYPES, UploadedMedia } from "@leadline/core/messages/UploadedMedia"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import { RequestErrors } from "../RequestErrors.ts"
import * as WireErrors from "../WireErrors.ts"
import { Forbidden, NotFound, ValidationError } from "../WireErrors.ts"

/** The upload route: the one that takes `multipart/form-data`, and bodies past the API's limit (`RequestEnvelope.ts`). */
export const UPLOAD_PATH = "/api/v1/media"

/** The form an upload posts; its parts are streamed to the handler, never held whole. */
const UploadForm = Schema.Struct({
  file: Schema.String.annotate({
    format: "binary",
    description:
      "The file, with its content type (one WhatsApp sends: image/jpeg, image/png, video/mp4, video/3gpp, audio/aac, audio/amr, audio/mpeg, audio/mp4, audio/ogg, a PDF, text or Office document, or image/webp as a sticker) and filename"
  }),
  type: Schema.optional(
    Schema.Literals(SEND_TYPES).annotate({
      description: "What the file is to be sent as; 400 when its content type says otherwise"
    })
  )
}).pipe(HttpApiSchema.asMultipartStream())

export class MediaApi extends HttpApiGroup.make("media")
  .add(
    HttpApiEndpoint.post("upload", "/", {
      payload: UploadForm,
      success: UploadedMedia.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, ValidationError, WireErrors.of(MediaTooLarge)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Upload a file to send",
        description:
          "`multipart/form-data` with a `file` part (and an optional `type`): kept, to be sent by its id in an `image`, `video`, `audio` or `document` message (docs/contract-messaging.md §5.9). 413 `payload_too_large` over the type's limit (image 5 MiB, audio and video 16 MiB, document 100 MiB); nothing is kept then. Needs `messages:send`."
      })
    ),
    HttpApiEndpoint.get("get", "/:id", {
      params: { id: Id.annotate({ description: "A media id, `med_…`" }) },
      success: UploadedMedia,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Get an uploaded file",
        description: "Needs `conversations:read` or `messages:send`."
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix(UPLOAD_PATH)
  .annotateMerge(
    OpenApi.annotations({ title: "Media", description: "Files uploaded to be sent (docs/contract-messaging.md §5.9)." })
  ) {}

import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { type MediaFile, MessageMedia } from "@leadline/core/messages/MessageMedia"
import { Messages } from "@leadline/core/messages/Messages"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"

/** The file's bytes, streamed; 304 when the caller holds this version (its ETag, the SHA-256). */
const fileResponse = (file: MediaFile, ifNoneMatch: string | undefined) => {
  const etag = `"${file.sha256}"`
  const held = ifNoneMatch?.split(",").some((tag) => {
    const trimmed = tag.trim()
    return trimmed === "*" || trimmed === etag || trimmed === `W/${etag}`
  })
  return held === true
    ? HttpServerResponse.empty({ status: 304, headers: { etag } })
    : HttpServerResponse.stream(file.bytes, {
        contentType: file.contentType,
        contentLength: file.size,
        // The type is the customer's word (a "text/html" document, say): never sniffed, never run.
        headers: {
          etag,
          "cache-control": "private, max-age=0, must-revalidate",
          "x-content-type-options": "nosniff",
          "content-security-policy": "sandbox; default-src 'none'"
        }
      })
}

export const layer = HttpApiBuilder.group(
  Api,
  "messages",
  Effect.fnUntraced(function* (handlers) {
    const messages = yield* Messages
    const media = yield* MessageMedia
    return handlers
      .handle("get", ({ params }) => wire(messages.get(params.id)).pipe(Respond.ok))
      .handle("media", ({ params, headers }) =>
        wire(media.get(params.id)).pipe(Effect.map((file) => fileResponse(file, headers["if-none-match"])))
      )
      .handle("send", ({ payload }) => wire(messages.sendToLead(payload)).pipe(Respond.created))
      .handle("react", ({ params, payload }) => wire(messages.react(params.id, payload)).pipe(Respond.created))
  })
)

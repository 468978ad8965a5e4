import { MediaDownloader, MediaFailure } from "@leadline/core/whatsapp/MediaDownloader"
import { Effect, Layer, Stream } from "effect"

/**
 * `MediaDownloader` offline (docs/contract-messaging.md §5.8): every media id has a file of its
 * own, the same bytes each time, so `npm start` keeps inbound files with no Meta app. An id
 * that starts with `gone` plays a file WhatsApp no longer has.
 */

/** The bytes the simulator serves for `mediaId`: a text naming it, repeated to 4 KiB. */
export const bytesOf = (mediaId: string): Uint8Array => {
  const line = new TextEncoder().encode(`Leadline simulator media ${mediaId}\n`)
  const bytes = new Uint8Array(4096)
  for (let offset = 0; offset < bytes.length; offset += line.length)
    bytes.set(line.subarray(0, bytes.length - offset), offset)
  return bytes
}

export const layer: Layer.Layer<MediaDownloader> = Layer.succeed(MediaDownloader)({
  download: (_channel, mediaId) =>
    mediaId.startsWith("gone")
      ? Effect.fail(new MediaFailure({ kind: "gone", message: `media ${mediaId} is gone (simulated)` }))
      : Effect.sync(() => {
          const bytes = bytesOf(mediaId)
          return { mimeType: null, sha256: null, fileSize: bytes.length, bytes: Stream.succeed(bytes) }
        })
})

import { MediaDownloader, MediaFailure } from "@leadline/core/whatsapp/MediaDownloader"
import { Effect, Layer, Stream } from "effect"

/**
 * `MediaDownloader` offline (docs/contract-messaging.md §5.8): every media id has a file of its
 * own, the same bytes each time, so `npm start` keeps inbound files with no Meta app. An id
 * that starts with `gone` plays a file WhatsApp no longer has, one that starts with `png` a
 * picture (a 32×32 PNG), so that a page can be shown an image it can draw.
 */

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAIAAAD8GO2jAAAAOklEQVR42mPgL8vDis78/ogVkaqeYdSCUQuGgAXUMgiX+lELRi0YChaMFhWjFoxaMFofjFowagEQAQD/RlZq0OExYgAAAABJRU5ErkJggg=="
  ),
  (char) => char.charCodeAt(0)
)

/** The bytes the simulator serves for `mediaId`: a text naming it, repeated to 4 KiB (or the PNG). */
export const bytesOf = (mediaId: string): Uint8Array => {
  if (mediaId.startsWith("png")) return PNG
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
          const mimeType = mediaId.startsWith("png") ? "image/png" : null
          return { mimeType, sha256: null, fileSize: bytes.length, bytes: Stream.succeed(bytes) }
        })
})

import type * as MediaFetcher from "@leadline/core/whatsapp/MediaFetcher"
import * as MediaLimits from "@leadline/core/messages/MediaLimits"
import { Config, Option, Schema } from "effect"
import { join } from "node:path"

/**
 * Where inbound files are kept and how large they may be (docs/contract-messaging.md §5.8):
 * `LEADLINE_MEDIA_STORE` (`fs`, the default, or `postgres`), `LEADLINE_MEDIA_DIR` (the `fs`
 * store's directory; `media` in the data directory unless set), one limit per type,
 * `LEADLINE_MEDIA_MAX_<TYPE>_BYTES` (Meta's limits unless set), and whether `leadline serve` runs
 * a fetcher of its own (`LEADLINE_MEDIA_FETCHER_ENABLED`; `leadline worker` always does).
 */
const limit = (type: MediaLimits.MediaType) =>
  Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), `LEADLINE_MEDIA_MAX_${type.toUpperCase()}_BYTES`).pipe(
    Config.withDefault(MediaLimits.defaults[type])
  )

export const MediaConfig = Config.all({
  store: Config.schema(Schema.Literals(["fs", "postgres"]), "LEADLINE_MEDIA_STORE").pipe(
    Config.withDefault("fs" as const)
  ),
  directory: Config.option(Config.String("LEADLINE_MEDIA_DIR")),
  // Off where workers fetch, so that the server's core answers webhooks only (bench/ANALYSIS.md).
  fetcherEnabled: Config.Boolean("LEADLINE_MEDIA_FETCHER_ENABLED").pipe(Config.withDefault(true)),
  limits: Config.all({
    image: limit("image"),
    audio: limit("audio"),
    video: limit("video"),
    document: limit("document"),
    sticker: limit("sticker")
  })
})
export type MediaConfig = Config.Success<typeof MediaConfig>

/** The `fs` store's directory. */
export const directoryOf = (media: MediaConfig, dataDir: string): string =>
  Option.getOrElse(media.directory, () => join(dataDir, "media"))

/** The upload route's body limit: the largest file a send type may be, and a MiB for the form around it. */
export const uploadMaxBodyBytes = (media: MediaConfig): number =>
  Math.max(media.limits.image, media.limits.video, media.limits.audio, media.limits.document, media.limits.sticker) +
  1024 * 1024

/** The fetcher's settings. */
export const fetcherOptions = (media: MediaConfig): MediaFetcher.Options => ({ limits: media.limits })

import { Context } from "effect"

/** The file types WhatsApp delivers with a media id, whose bytes Leadline keeps. */
export const MEDIA_TYPES = ["image", "audio", "video", "document", "sticker"] as const
export type MediaType = (typeof MEDIA_TYPES)[number]

/** The most bytes kept per type; a larger file ends `failed` with `too_large`. */
export type Limits = Readonly<Record<MediaType, number>>

const MB = 1024 * 1024

/**
 * Meta's own limits (Cloud API, "Supported media types"); a sticker's is the animated one's
 * (500 KB): a static sticker is 100 KB at most, and the webhook does not always say which.
 */
export const defaults: Limits = {
  image: 5 * MB,
  audio: 16 * MB,
  video: 16 * MB,
  document: 100 * MB,
  sticker: 500 * 1024
}

/** The limit of a message's type; a type without one (never enqueued) gets the largest. */
export const limitOf = (limits: Limits, type: string): number =>
  (MEDIA_TYPES as ReadonlyArray<string>).includes(type) ? limits[type as MediaType] : limits.document

/**
 * The limits a deployment set (`LEADLINE_MEDIA_MAX_<TYPE>_BYTES`), read by the uploads of
 * `POST /api/v1/media` (docs/contract-messaging.md §5.9); Meta's unless the server gives its own.
 */
export class Setting extends Context.Reference<Limits>("core/MediaLimits", { defaultValue: () => defaults }) {}

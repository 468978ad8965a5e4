import { Schema } from "effect"

/** The send types that carry a file (docs/contract-messaging.md §5.9). */
export const SEND_TYPES = ["image", "video", "audio", "document", "sticker"] as const
export type SendType = (typeof SEND_TYPES)[number]

export const isSendType = (type: string): type is SendType => (SEND_TYPES as ReadonlyArray<string>).includes(type)

/**
 * The content types Meta's Cloud API takes for each send type ("Supported media types"): a file
 * is sendable as the one type its content type belongs to: a WebP image is a sticker (static up to
 * 100 KB, animated up to 500 KB: Meta checks which).
 */
export const CONTENT_TYPES: Readonly<Record<SendType, ReadonlyArray<string>>> = {
  image: ["image/jpeg", "image/png"],
  video: ["video/mp4", "video/3gpp"],
  audio: ["audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg"],
  document: [
    "text/plain",
    "application/pdf",
    "application/msword",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.ms-excel",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.ms-powerpoint",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation"
  ],
  sticker: ["image/webp"]
}

/** A content type without its parameters, lower case: `Audio/OGG; codecs=opus` is `audio/ogg`. */
export const essence = (contentType: string): string => contentType.split(";", 1)[0]!.trim().toLowerCase()

/** The send type a content type is sent as, or undefined when Meta takes it for none. */
export const sendTypeOf = (contentType: string): SendType | undefined => {
  const bare = essence(contentType)
  return SEND_TYPES.find((type) => CONTENT_TYPES[type].includes(bare))
}

/** `POST /api/v1/media`'s answer and `GET /api/v1/media/{id}` (docs/contract-messaging.md §5.9). */
export const UploadedMedia = Schema.Struct({
  id: Schema.String.annotate({ description: "`med_` followed by a sortable id" }),
  type: Schema.Literals(SEND_TYPES).annotate({ description: "The send type the file goes as, from its content type" }),
  mime_type: Schema.String.annotate({ description: "The file part's content type, without parameters" }),
  size: Schema.Number.annotate({ description: "Bytes kept" }),
  sha256: Schema.String.annotate({ description: "SHA-256 of the bytes, hex" }),
  filename: Schema.NullOr(Schema.String).annotate({ description: "The file part's filename, as sent" }),
  created_at: Schema.String
}).annotate({ identifier: "Media" })
export type UploadedMedia = typeof UploadedMedia.Type

/** What a send of a file says (`image`, `video`, `audio`, `document`, `sticker`): a stored file or a link. */
export interface MediaContent {
  /** An uploaded media, `med_…`; or null with a `link`. */
  readonly media_id: string | null
  readonly link: string | null
  readonly mime_type: string | null
  readonly size: number | null
  readonly sha256: string | null
  readonly filename: string | null
  readonly caption: string | null
}

/** The wire shape of an outbound file on a message (`media`, docs/contract-messaging.md §5.1). */
export const SentMedia = Schema.Struct({
  media_id: Schema.NullOr(Schema.String).annotate({
    description: "The uploaded media sent (`med_…`), or null for a link"
  }),
  link: Schema.NullOr(Schema.String).annotate({ description: "The https URL WhatsApp fetched the file from, or null" }),
  mime_type: Schema.NullOr(Schema.String).annotate({
    description: "An uploaded media's content type; null for a link"
  }),
  size: Schema.NullOr(Schema.Number).annotate({ description: "An uploaded media's bytes; null for a link" }),
  sha256: Schema.NullOr(Schema.String).annotate({ description: "An uploaded media's SHA-256, hex; null for a link" }),
  filename: Schema.NullOr(Schema.String).annotate({ description: "A document's filename as WhatsApp shows it" }),
  caption: Schema.NullOr(Schema.String).annotate({ description: "The caption sent with an image, video or document" })
}).annotate({ identifier: "MessageSentMedia" })

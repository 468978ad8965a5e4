import { Schema } from "effect"
import { jsonProblem, Text } from "../Text.ts"
import { Interactive } from "./Interactive.ts"
import { type MediaContent, SEND_TYPES, type SendType, SentMedia } from "./UploadedMedia.ts"

const Nullable = Schema.NullOr(Schema.String)

export const MessageError = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  provider_code: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "MessageError" })

/** The message this one answers (WhatsApp's `context`) or reacts to: ours, and its wamid. */
export const ReplyTo = Schema.Struct({
  message_id: Schema.String.annotate({ description: "The Leadline id of the message answered or reacted to" }),
  external_id: Schema.String.annotate({ description: "Its WhatsApp id (wamid)" })
}).annotate({ identifier: "MessageReplyTo" })
export type ReplyTo = typeof ReplyTo.Type

const receivedMedia = {
  provider_media_id: Schema.String,
  mime_type: Nullable,
  sha256: Nullable,
  filename: Nullable
}

/** What WhatsApp says of an inbound file: its id, type, checksum and name. */
export type ReceivedMedia = Schema.Struct.Type<typeof receivedMedia>

/** An inbound file and whether Leadline keeps its bytes (docs/contract-messaging.md §5.8). */
export const Media = Schema.Struct({
  ...receivedMedia,
  state: Schema.Literals(["pending", "stored", "failed"]).annotate({
    description:
      "pending: being fetched from WhatsApp; stored: GET /api/v1/messages/{id}/media serves it; failed: see reason"
  }),
  reason: Nullable.annotate({
    description:
      "Why the file is not kept (state failed): too_large, media_gone, checksum_mismatch, download_failed, not_kept"
  }),
  size: Schema.NullOr(Schema.Number).annotate({ description: "Bytes kept (state stored)" })
}).annotate({ identifier: "MessageMedia" })

export type InboundMedia = typeof Media.Type

/** A message in or out (docs/contract-messaging.md §5.1). */
export const Message = Schema.Struct({
  id: Schema.String.annotate({ description: "`msg_` followed by a sortable id" }),
  conversation_id: Schema.String,
  lead_id: Schema.String,
  channel_id: Schema.String,
  direction: Schema.Literals(["inbound", "outbound"]),
  type: Schema.String.annotate({
    description:
      "Outbound: text, template, interactive, reaction, image, video, audio or document; inbound: WhatsApp's type as received"
  }),
  text: Nullable,
  template: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  interactive: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "Outbound interactive message (reply buttons or a list) as sent to WhatsApp"
  }),
  reply_to: Schema.NullOr(ReplyTo).annotate({
    description: "The message this one answers (WhatsApp's context) or reacts to, when Leadline has it; null otherwise"
  }),
  media: Schema.NullOr(Schema.Union([Media, SentMedia])).annotate({
    description:
      "Inbound: the file WhatsApp delivered and whether Leadline keeps it; outbound image, video, audio or document: the file sent (an uploaded media or a link); else null"
  }),
  status: Schema.Literals(["received", "queued", "sent", "delivered", "read", "failed", "cancelled"]),
  error: Schema.NullOr(MessageError),
  external_id: Nullable.annotate({ description: "WhatsApp's message id (wamid)" }),
  sender_type: Schema.Literals(["lead", "user", "agent", "campaign", "system"]).annotate({
    description:
      "`system`: sent by Leadline itself on the account's behalf (a keyword opt-out's confirmation), with no `sender_id`"
  }),
  sender_id: Nullable,
  campaign_id: Nullable,
  scheduled_at: Nullable,
  provider_timestamp: Nullable,
  provider_payload: Schema.NullOr(Schema.Unknown).annotate({
    description: "Inbound: the item exactly as WhatsApp sent it, so no type loses anything"
  }),
  created_at: Schema.String,
  updated_at: Schema.String,
  sent_at: Nullable,
  delivered_at: Nullable,
  read_at: Nullable,
  failed_at: Nullable
}).annotate({ identifier: "Message" })
export type Message = typeof Message.Type

/** Where a message lives: its thread and the lead and channel of that thread. */
export interface Placement {
  readonly id: string
  readonly conversation_id: string
  readonly lead_id: string
  readonly channel_id: string
}

/** An inbound message's file: `media` of a message WhatsApp delivered (an outbound one's is `SentMedia`). */
export const inboundMedia = (message: Message): InboundMedia | null =>
  message.media !== null && "provider_media_id" in message.media ? message.media : null

/** An outbound file send's `media`, or null for any other message. */
export const sentMedia = (message: Message): MediaContent | null =>
  message.direction === "outbound" && message.media !== null && "media_id" in message.media ? message.media : null

/**
 * What an outbound message says: a text, a template with its components, an interactive message,
 * or a file (an uploaded media or a link).
 */
export type OutboundContent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: SendType; readonly media: MediaContent }
  | { readonly type: "interactive"; readonly interactive: Interactive }
  | {
      readonly type: "template"
      readonly template: {
        readonly name: string
        readonly language: string
        /** As WhatsApp's Cloud API takes them: checked on the way in, stored as given. */
        readonly components: unknown
      }
    }

// What every new message starts with: no status moved yet, nothing learned from the provider.
const fresh = (placement: Placement, now: string) => ({
  ...placement,
  text: null,
  template: null,
  interactive: null,
  reply_to: null,
  media: null,
  error: null,
  external_id: null,
  campaign_id: null,
  scheduled_at: null,
  provider_timestamp: null,
  provider_payload: null,
  created_at: now,
  updated_at: now,
  sent_at: null,
  delivered_at: null,
  read_at: null,
  failed_at: null
})

// A message to send, queued, with what it says.
const queued = (placement: Placement, content: OutboundContent, now: string) => ({
  ...fresh(placement, now),
  type: content.type,
  // A file's caption is its text, as on an inbound file.
  text: content.type === "text" ? content.text : "media" in content ? content.media.caption : null,
  template: content.type === "template" ? { ...content.template } : null,
  interactive: content.type === "interactive" ? { ...content.interactive } : null,
  media: "media" in content ? { ...content.media } : null,
  direction: "outbound" as const,
  status: "queued" as const
})

/** Who queued an outbound message: a person, an agent, or Leadline itself (no id). */
export type Sender =
  | { readonly type: "user" | "agent"; readonly id: string }
  | { readonly type: "system"; readonly id: null }

/** A message queued to send, written by a person, an agent or the system (`sender`). */
export const outbound = (placement: Placement, content: OutboundContent, sender: Sender, now: string): Message => ({
  ...queued(placement, content, now),
  sender_type: sender.type,
  sender_id: sender.id
})

/**
 * A person's reaction to a message of the thread (`target`, whose wamid is known): the emoji in
 * `text` (null when the reaction is removed), the target in `reply_to`.
 */
export const reaction = (
  placement: Placement,
  target: ReplyTo,
  emoji: string,
  sender: { readonly type: "user"; readonly id: string },
  now: string
): Message => ({
  ...fresh(placement, now),
  type: "reaction",
  text: emoji === "" ? null : emoji,
  reply_to: target,
  direction: "outbound",
  status: "queued",
  sender_type: sender.type,
  sender_id: sender.id
})

/** A campaign's message to one recipient: a template, queued until `scheduledAt` (null: at once). */
export const fromCampaign = (
  placement: Placement,
  template: Extract<OutboundContent, { readonly type: "template" }>["template"],
  campaign: { readonly id: string; readonly scheduledAt: string | null },
  now: string
): Message => ({
  ...queued(placement, { type: "template", template }, now),
  sender_type: "campaign",
  sender_id: campaign.id,
  campaign_id: campaign.id,
  scheduled_at: campaign.scheduledAt
})

/** A message a lead sent, as WhatsApp delivered it: its type, content and item kept as received. */
export const fromWhatsApp = (
  placement: Placement,
  received: {
    readonly type: string
    readonly text: string | null
    readonly media: ReceivedMedia | null
    readonly error: Message["error"]
    readonly externalId: string
    readonly providerTimestamp: string
    readonly providerPayload: unknown
    /** The stored message its `context.id` (or a reaction's `message_id`) names, if any. */
    readonly replyTo?: ReplyTo | null | undefined
  },
  now: string
): Message => ({
  ...fresh(placement, now),
  reply_to: received.replyTo ?? null,
  direction: "inbound",
  type: received.type,
  text: received.text,
  // Its bytes are fetched after the commit (whatsapp/MediaFetcher.ts).
  media: received.media === null ? null : { ...received.media, state: "pending", reason: null, size: null },
  status: "received",
  error: received.error,
  external_id: received.externalId,
  sender_type: "lead",
  sender_id: placement.lead_id,
  provider_timestamp: received.providerTimestamp,
  provider_payload: received.providerPayload
})

const MAX_TEMPLATE_BYTES = 16 * 1024

const Body = Text.check(
  Schema.isMinLength(1, { message: "text must not be empty" }),
  Schema.isMaxLength(4096, { message: "text must be at most 4096 characters" })
)

const Component = Schema.Record(Schema.String, Schema.Unknown).check(
  Schema.makeFilter((component: Record<string, unknown>) =>
    typeof component.type === "string" ? (jsonProblem(component) ?? true) : "a component needs a string type"
  )
)

/** A WhatsApp template's name and language, as Meta spells them. */
export const TemplateName = Text.check(
  Schema.isPattern(/^[a-z0-9_]{1,512}$/, {
    message: "template.name must be 1 to 512 lower-case letters, digits or underscores"
  })
)
export const TemplateLanguage = Text.check(
  Schema.isPattern(/^[a-z]{2,3}(_[A-Z]{2})?$/, { message: "template.language must look like en or en_US" })
)

export const Template = Schema.Struct({
  name: TemplateName,
  language: TemplateLanguage,
  components: Schema.optional(
    Schema.Array(Component).check(Schema.isMaxLength(10, { message: "at most 10 components" }))
  )
})
  .check(
    Schema.makeFilter(
      (template) =>
        new TextEncoder().encode(JSON.stringify(template)).length <= MAX_TEMPLATE_BYTES ||
        "a template must be at most 16 KiB of JSON"
    )
  )
  .annotate({ identifier: "Template" })

/** The longest `link` (as a webhook URL's) and caption (Meta's) and filename taken. */
const MAX_LINK = 2048
const MAX_CAPTION = 1024
const MAX_FILENAME = 240

const bounded = (field: string, max: number) =>
  Text.check(
    Schema.isMinLength(1, { message: `${field} must not be empty` }),
    Schema.isMaxLength(max, { message: `${field} must be at most ${max} characters` })
  )

/**
 * A file to send as `type` (docs/contract-messaging.md §5.9): an uploaded media (`id`) or an https
 * `link` WhatsApp fetches, exactly one; a caption on an image, video or document; a filename on a
 * document. Whether `id` names a file of the account, and the link's host, are checked further in.
 */
const MediaSend = (type: SendType) =>
  Schema.Struct({
    id: Schema.optional(
      bounded("id", 64).annotate({ description: "An upload of POST /api/v1/media (`med_…`); or give `link`" })
    ),
    link: Schema.optional(
      bounded("link", MAX_LINK)
        .check(Schema.makeFilter((link: string) => /^https:\/\//i.test(link) || "link must be an https URL"))
        .annotate({ description: "An https URL WhatsApp fetches the file from (no private or internal host)" })
    ),
    caption: Schema.optional(
      bounded("caption", MAX_CAPTION).annotate({ description: "Image, video and document: up to 1024 characters" })
    ),
    filename: Schema.optional(
      bounded("filename", MAX_FILENAME).annotate({
        description: "Document only: the name WhatsApp shows (the upload's own by default)"
      })
    )
  }).check(
    Schema.makeFilter((media) => {
      if (media.id === undefined && media.link === undefined) return { path: ["id"], issue: "give id or link" }
      if (media.id !== undefined && media.link !== undefined) {
        return { path: ["link"], issue: "give id or link, not both" }
      }
      if ((type === "audio" || type === "sticker") && media.caption !== undefined) {
        return { path: ["caption"], issue: `${type === "audio" ? "audio has" : "a sticker has"} no caption` }
      }
      if (type !== "document" && media.filename !== undefined) {
        return { path: ["filename"], issue: "only a document has a filename" }
      }
      return true
    })
  )
export type MediaSend = Schema.Schema.Type<ReturnType<typeof MediaSend>>

const CONTENT_FIELDS = ["text", "template", "interactive", ...SEND_TYPES] as const
type ContentField = (typeof CONTENT_FIELDS)[number]
const KIND: Record<ContentField, string> = {
  text: "a text message",
  template: "a template message",
  interactive: "an interactive message",
  image: "an image message",
  video: "a video message",
  audio: "an audio message",
  document: "a document message",
  sticker: "a sticker message"
}

// One struct with a checked `type` rather than a union: HttpApi reports a union's mismatch
// against the whole body, and a caller should be told which field is wrong.
const sendFields = {
  type: Schema.String.check(
    Schema.makeFilter(
      (type: string) =>
        (CONTENT_FIELDS as ReadonlyArray<string>).includes(type) ||
        'type must be "text", "template", "interactive", "image", "video", "audio", "document" or "sticker" (a reaction is POST /api/v1/messages/{id}/reactions)'
    )
  ),
  text: Schema.optional(Body),
  template: Schema.optional(Template),
  interactive: Schema.optional(Interactive),
  image: Schema.optional(MediaSend("image")),
  video: Schema.optional(MediaSend("video")),
  audio: Schema.optional(MediaSend("audio")),
  document: Schema.optional(MediaSend("document")),
  sticker: Schema.optional(MediaSend("sticker"))
}

// Each type has its own field and no other's.
const consistent = Schema.makeFilter((send: { readonly type: string } & { readonly [K in ContentField]?: unknown }) => {
  const own = send.type as ContentField
  // An unknown type is reported by its own check.
  if (!CONTENT_FIELDS.includes(own)) return true
  if (send[own] === undefined) return { path: [own], issue: `${own} is required for ${KIND[own]}` }
  for (const field of CONTENT_FIELDS) {
    if (field !== own && send[field] !== undefined) {
      return { path: [field], issue: `only ${KIND[field]} has ${field}` }
    }
  }
  return true
})

/**
 * `POST /api/v1/conversations/{id}/messages`: a text, a template, an interactive message or a file
 * (docs/contract-messaging.md §5.2, §5.9).
 */
export const SendMessage = Schema.Struct(sendFields).check(consistent).annotate({ identifier: "SendMessage" })
export type SendMessage = typeof SendMessage.Type

/** `POST /api/v1/messages`: the same, to a lead; the conversation is found or made. */
export const SendToLead = Schema.Struct({
  ...sendFields,
  lead_id: Text.annotate({ description: "The lead to write to" }),
  channel_id: Schema.optional(
    Text.annotate({ description: "Needed when the account has more than one active channel" })
  )
})
  .check(consistent)
  .annotate({ identifier: "SendToLead" })
export type SendToLead = typeof SendToLead.Type

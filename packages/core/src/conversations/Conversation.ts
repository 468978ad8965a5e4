import { Schema } from "effect"
import { PageQueryFields } from "../Pagination.ts"
import { Id } from "../Text.ts"

export const ConversationStatus = Schema.Literals(["open", "pending", "resolved", "snoozed"]).annotate({
  identifier: "ConversationStatus"
})
export type ConversationStatus = typeof ConversationStatus.Type

/** Why an agent handed a conversation to a person (docs/contract-commerce-ai.md §6), or `error`: its model kept failing. */
export const HandoffReason = Schema.Literals(["keyword", "no_knowledge", "model", "error"])

export const ConversationHandoff = Schema.Struct({
  agent_id: Schema.String,
  reason: HandoffReason,
  at: Schema.String
}).annotate({
  identifier: "ConversationHandoff",
  description:
    "Set when an agent handed the conversation to a person: no agent answers it until it is resolved or this is set to null"
})
export type ConversationHandoff = typeof ConversationHandoff.Type

/** One thread per (channel, lead): resolving and reopening keep its id (docs/contract-messaging.md §4). */
export const Conversation = Schema.Struct({
  id: Schema.String.annotate({ description: "`cv_` followed by a sortable id" }),
  lead_id: Schema.String,
  channel_id: Schema.String,
  status: ConversationStatus,
  assigned_user_id: Schema.NullOr(Schema.String),
  snoozed_until: Schema.NullOr(Schema.String),
  contact_wa_id: Schema.NullOr(Schema.String).annotate({ description: "The `wa_id` WhatsApp reported, once known" }),
  last_message_at: Schema.NullOr(Schema.String),
  last_inbound_at: Schema.NullOr(Schema.String).annotate({
    description: "WhatsApp's timestamp of the newest inbound message: the 24-hour window runs from it"
  }),
  service_window_expires_at: Schema.NullOr(Schema.String),
  handoff: Schema.NullOr(ConversationHandoff),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "Conversation" })
export type Conversation = typeof Conversation.Type

/** Who the thread is with, so an inbox names a person rather than an id. */
export const ConversationLead = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  phone: Schema.String
}).annotate({ identifier: "ConversationLead" })
export type ConversationLead = typeof ConversationLead.Type

/** The newest message of a thread, as an inbox row shows it. */
export const LastMessage = Schema.Struct({
  id: Schema.String,
  direction: Schema.Literals(["inbound", "outbound"]),
  type: Schema.String,
  text: Schema.String.annotate({
    description:
      'A preview: the text or caption on one line, cut to 140 characters, or a label for a file, template or other type ("Image", "Document: invoice.pdf", "Template hello_world")'
  }),
  status: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "ConversationLastMessage" })
export type LastMessage = typeof LastMessage.Type

/**
 * What `GET /api/v1/conversations` (and GET one, and PATCH) answer: the conversation with what an
 * inbox shows of it, read when asked. Events carry the conversation alone (§9): these fields move
 * with every message, which is not a change of the conversation.
 */
export const ConversationView = Schema.Struct({
  ...Conversation.fields,
  lead: ConversationLead,
  last_message: Schema.NullOr(LastMessage).annotate({
    description: "The newest message of the thread, campaign messages included; null for none"
  }),
  unread_count: Schema.Number.annotate({
    description: "Inbound messages after the latest one marked read (POST /api/v1/conversations/{id}/read sets it to 0)"
  })
}).annotate({ identifier: "ConversationView" })
export type ConversationView = typeof ConversationView.Type

export const PREVIEW_CHARS = 140

const TYPE_LABELS: Record<string, string> = {
  image: "Image",
  video: "Video",
  audio: "Audio",
  voice: "Voice message",
  document: "Document",
  sticker: "Sticker",
  location: "Location",
  contacts: "Contact",
  interactive: "Interactive message",
  button: "Button reply",
  reaction: "Reaction",
  order: "Order",
  template: "Template"
}

/** An inbox row's preview of a message: its text or caption, cut; else what it is. */
export const previewText = (message: {
  readonly type: string
  readonly text: string | null
  readonly template: { readonly [key: string]: unknown } | null
  readonly media: { readonly filename?: string | null } | null
}): string => {
  // One line: an inbox row has no room for the text's line breaks.
  const text = message.text?.replace(/\s+/g, " ").trim() ?? ""
  if (text !== "") return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1).trimEnd()}…` : text
  const label = TYPE_LABELS[message.type] ?? message.type
  if (message.type === "template" && typeof message.template?.name === "string")
    return `${label} ${message.template.name}`
  const filename = message.media?.filename
  return typeof filename === "string" && filename !== "" ? `${label}: ${filename}` : label
}

/** A new thread: `open` when the customer wrote first, `pending` when we did (§4.2). */
export const fresh = (fields: {
  readonly id: string
  readonly lead_id: string
  readonly channel_id: string
  readonly status: "open" | "pending"
  readonly contact_wa_id: string | null
  readonly now: string
}): Conversation => ({
  id: fields.id,
  lead_id: fields.lead_id,
  channel_id: fields.channel_id,
  status: fields.status,
  assigned_user_id: null,
  snoozed_until: null,
  contact_wa_id: fields.contact_wa_id,
  last_message_at: null,
  last_inbound_at: null,
  service_window_expires_at: null,
  handoff: null,
  created_at: fields.now,
  updated_at: fields.now
})

export const DAY_MILLIS = 24 * 60 * 60 * 1000

/** `service_window_expires_at` follows from `last_inbound_at`: stored nowhere, so it cannot drift. */
export const windowExpiry = (lastInboundAt: string | null): string | null =>
  lastInboundAt === null ? null : new Date(Date.parse(lastInboundAt) + DAY_MILLIS).toISOString()

/** `PATCH /api/v1/conversations/{id}` (full access): the rules are the service's (§4.3). */
export const UpdateConversation = Schema.Struct({
  status: Schema.optional(ConversationStatus),
  snoozed_until: Schema.optional(
    Schema.NullOr(
      Schema.String.check(
        Schema.makeFilter(
          (value: string) => !Number.isNaN(Date.parse(value)) || "snoozed_until must be an ISO 8601 time"
        )
      )
    )
  ),
  assigned_user_id: Schema.optional(Schema.NullOr(Schema.String)),
  handoff: Schema.optional(Schema.Null).annotate({
    description: "null gives a conversation an agent handed off back to the agent"
  })
}).annotate({ identifier: "UpdateConversation" })
export type UpdateConversation = typeof UpdateConversation.Type

export interface Filters {
  readonly status?: ConversationStatus | undefined
  /** A user id, or "none" for unassigned. */
  readonly assigned_user_id?: string | undefined
  readonly lead_id?: string | undefined
  readonly channel_id?: string | undefined
}

export const ListQueryFields = {
  ...PageQueryFields,
  status: Schema.optional(ConversationStatus),
  assigned_user_id: Schema.optional(Id.annotate({ description: 'A user id, or "none" for unassigned' })),
  lead_id: Schema.optional(Id),
  channel_id: Schema.optional(Id)
}

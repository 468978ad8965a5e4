import { Schema } from "effect"

const Nullable = Schema.NullOr(Schema.String)

export const MessageError = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  provider_code: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "MessageError" })

export const Media = Schema.Struct({
  provider_media_id: Schema.String,
  mime_type: Nullable,
  sha256: Nullable,
  filename: Nullable
}).annotate({ identifier: "MessageMedia" })

/** A message in or out (CONTRACT-MESSAGING §5.1). */
export const Message = Schema.Struct({
  id: Schema.String.annotate({ description: "`msg_` followed by a sortable id" }),
  conversation_id: Schema.String,
  lead_id: Schema.String,
  channel_id: Schema.String,
  direction: Schema.Literals(["inbound", "outbound"]),
  type: Schema.String.annotate({ description: "Outbound: text or template; inbound: WhatsApp's type as received" }),
  text: Nullable,
  template: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  media: Schema.NullOr(Media),
  status: Schema.Literals(["received", "queued", "sent", "delivered", "read", "failed", "cancelled"]),
  error: Schema.NullOr(MessageError),
  external_id: Nullable.annotate({ description: "WhatsApp's message id (wamid)" }),
  sender_type: Schema.Literals(["lead", "user", "agent", "campaign"]),
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

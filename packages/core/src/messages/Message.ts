import { Schema } from "effect"
import { jsonProblem, Text } from "../Text.ts"

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

/** A message in or out (docs/contract-messaging.md §5.1). */
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

// One struct with a checked `type` rather than a union of two: HttpApi reports a union's
// mismatch against the whole body, and a caller should be told which field is wrong.
const sendFields = {
  type: Schema.String.check(
    Schema.makeFilter((type: string) => type === "text" || type === "template" || 'type must be "text" or "template"')
  ),
  text: Schema.optional(Body),
  template: Schema.optional(Template)
}

const consistent = Schema.makeFilter((send: { type: string; text?: string | undefined; template?: unknown }) => {
  if (send.type === "text" && send.text === undefined)
    return { path: ["text"], issue: "text is required for a text message" }
  if (send.type === "template" && send.template === undefined) {
    return { path: ["template"], issue: "template is required for a template message" }
  }
  if (send.type === "text" && send.template !== undefined)
    return { path: ["template"], issue: "only a template message has a template" }
  if (send.type === "template" && send.text !== undefined)
    return { path: ["text"], issue: "only a text message has text" }
  return true
})

/** `POST /api/v1/conversations/{id}/messages`: a text or a template (docs/contract-messaging.md §5.2). */
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

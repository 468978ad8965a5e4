import { Schema } from "effect"
import { Text } from "../Text.ts"
import { PhoneNumber } from "../leads/Phone.ts"

export const ChannelStatus = Schema.Literals(["active", "disabled"]).annotate({ identifier: "ChannelStatus" })
export type ChannelStatus = typeof ChannelStatus.Type

/** What the provider last refused about the channel (its token, its number), or null. */
export const ChannelError = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  provider_code: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "ChannelError" })
export type ChannelError = typeof ChannelError.Type

/** A connected WhatsApp number. The access token is write-only: it is never part of this. */
export const Channel = Schema.Struct({
  id: Schema.String.annotate({ description: "`ch_` followed by a sortable id" }),
  type: Schema.Literal("whatsapp"),
  name: Schema.String,
  phone_number_id: Schema.String.annotate({ description: "Meta's id of the number; unique in the deployment" }),
  display_phone_number: Schema.String.annotate({ description: "E.164" }),
  business_account_id: Schema.NullOr(Schema.String),
  status: ChannelStatus,
  last_error: Schema.NullOr(ChannelError),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "Channel" })
export type Channel = typeof Channel.Type

const Name = Text.check(
  Schema.isMinLength(1, { message: "name must not be empty" }),
  Schema.isMaxLength(100, { message: "name must be at most 100 characters" })
)

// Provider ids are strings and never parsed (docs/contract-messaging.md §2); bounded so they fit an index.
const ProviderId = (field: string) =>
  Text.check(
    Schema.isMinLength(1, { message: `${field} must not be empty` }),
    Schema.isMaxLength(64, { message: `${field} must be at most 64 characters` })
  )

const AccessToken = Text.check(
  Schema.isMinLength(1, { message: "access_token must not be empty" }),
  Schema.isMaxLength(4096, { message: "access_token must be at most 4096 characters" })
).annotate({ description: "The number's Graph API token: stored, never returned" })

// A string with a check rather than a literal: HttpApi reports a literal's mismatch
// against the whole body, losing the other fields' problems.
const ChannelType = Schema.String.check(
  Schema.makeFilter((type: string) => type === "whatsapp" || 'type must be "whatsapp"', { expected: '"whatsapp"' })
).annotate({ description: 'Only "whatsapp" for now' })

export const CreateChannel = Schema.Struct({
  type: ChannelType,
  name: Name,
  phone_number_id: ProviderId("phone_number_id"),
  display_phone_number: PhoneNumber,
  business_account_id: Schema.optional(Schema.NullOr(ProviderId("business_account_id"))),
  access_token: AccessToken
}).annotate({ identifier: "CreateChannel" })
export type CreateChannel = typeof CreateChannel.Type

export const UpdateChannel = Schema.Struct({
  name: Schema.optional(Name),
  access_token: Schema.optional(AccessToken),
  status: Schema.optional(ChannelStatus)
}).annotate({ identifier: "UpdateChannel" })
export type UpdateChannel = typeof UpdateChannel.Type

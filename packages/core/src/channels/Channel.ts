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

/**
 * Meta's quality rating of the number (docs/contract-messaging.md §3.1): `red` while Meta flags it,
 * `yellow` once unflagged (Meta's webhook says "medium or high", not which), `unknown` until Meta says.
 */
export const QualityRating = Schema.Literals(["green", "yellow", "red", "unknown"]).annotate({
  identifier: "ChannelQualityRating"
})
export type QualityRating = typeof QualityRating.Type

/** A restriction Meta put on the number or its business account, as Meta names it, and until when. */
export const ChannelRestriction = Schema.Struct({
  type: Schema.String.annotate({
    description:
      "Meta's `restriction_type` (e.g. `RESTRICTED_BIZ_INITIATED_MESSAGING`), or `ACCOUNT_DISABLED` when Meta disabled the business account"
  }),
  until: Schema.NullOr(Schema.String).annotate({ description: "When Meta lifts it; null: until Meta says" }),
  since: Schema.String
}).annotate({ identifier: "ChannelRestriction" })
export type ChannelRestriction = typeof ChannelRestriction.Type

/** What Meta says of the number's health, as its webhooks bring it. */
export interface ChannelHealth {
  readonly quality_rating: QualityRating
  readonly messaging_limit_tier: string | null
  readonly restrictions: ReadonlyArray<ChannelRestriction>
}

/** Restrictions that stop a business from starting conversations: campaigns wait while one holds. */
const BLOCKS_MARKETING: ReadonlySet<string> = new Set(["RESTRICTED_BIZ_INITIATED_MESSAGING", "ACCOUNT_DISABLED"])

/**
 * Why a campaign on this channel waits (§8.2, "paused"), and until when, or undefined: Meta flags the
 * number (its quality is low, and more marketing would get it restricted) or restricts
 * business-initiated messages. `until` is when the last blocking restriction ends; null while the
 * number is flagged or a blocking restriction has no end (until Meta clears it).
 */
export const campaignHold = (
  channel: ChannelHealth,
  now: string
):
  | {
      readonly reason: "channel_flagged" | "channel_restricted"
      readonly message: string
      readonly until: string | null
    }
  | undefined => {
  const blocking = channel.restrictions.filter(
    (r) => BLOCKS_MARKETING.has(r.type) && (r.until === null || r.until > now)
  )
  const flagged = channel.quality_rating === "red"
  const ends = blocking.map((r) => r.until)
  const until = flagged || ends.includes(null) ? null : (ends as Array<string>).reduce((a, b) => (a > b ? a : b), "")
  const first = blocking[0]
  if (first !== undefined) {
    return {
      reason: "channel_restricted",
      message: `Meta restricted the channel (${first.type})${first.until === null ? "" : ` until ${first.until}`}`,
      until
    }
  }
  if (flagged) return { reason: "channel_flagged", message: "Meta flagged the channel's number for low quality", until }
  return undefined
}

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
  quality_rating: QualityRating,
  messaging_limit_tier: Schema.NullOr(Schema.String).annotate({
    description: "Meta's messaging limit (`TIER_250`, `TIER_1K`, … `TIER_UNLIMITED`); null until Meta says"
  }),
  restrictions: Schema.Array(ChannelRestriction).annotate({
    description: "What Meta restricts on the number now; empty when nothing"
  }),
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

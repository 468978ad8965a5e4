import { Effect, Schema } from "effect"
import { LeadStatus } from "../leads/Lead.ts"
import { Template } from "../messages/Message.ts"
import { Text } from "../Text.ts"
import { isUnbounded, MAX_LEAD_IDS } from "../leads/Audience.ts"
import * as Placeholders from "./Placeholders.ts"

/** docs/contract-messaging.md §8.1. */
export const CampaignStatus = Schema.Literals([
  "draft",
  "queued",
  "sending",
  "completed",
  "failed",
  "cancelled"
]).annotate({ identifier: "CampaignStatus" })

const Tag = Text.check(
  Schema.isMinLength(1, { message: "a tag must not be empty" }),
  Schema.isMaxLength(64, { message: "a tag must be at most 64 characters" })
)
const Tags = Schema.Array(Tag).check(Schema.isMaxLength(50, { message: "at most 50 tags" }))

const audienceFields = {
  tags: Tags.annotate({ description: "Leads with any of these tags" }),
  statuses: Schema.Array(LeadStatus).annotate({ description: "When not empty, only leads in one of these statuses" }),
  lead_ids: Schema.Array(Text)
    .check(Schema.isMaxLength(MAX_LEAD_IDS, { message: `at most ${MAX_LEAD_IDS} lead ids` }))
    .annotate({ description: "These leads too, whatever their tags" }),
  exclude_tags: Tags.annotate({ description: "Never leads with any of these tags (an opt-out list)" })
}

export const CampaignAudience = Schema.Struct(audienceFields).annotate({ identifier: "CampaignAudience" })

/** What a caller writes: a criterion left out is empty, which is "not given" (§0a.9). */
const orEmpty = <S extends Schema.Top & { readonly Encoded: ReadonlyArray<unknown> }>(schema: S) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed([] as unknown as S["Encoded"])))

const AudienceInput = Schema.Struct({
  tags: orEmpty(audienceFields.tags),
  statuses: orEmpty(audienceFields.statuses),
  lead_ids: orEmpty(audienceFields.lead_ids),
  exclude_tags: orEmpty(audienceFields.exclude_tags)
}).annotate({ identifier: "CampaignAudienceInput" })

export const CampaignStats = Schema.Struct({
  total: Schema.Number,
  queued: Schema.Number,
  sent: Schema.Number,
  delivered: Schema.Number,
  read: Schema.Number,
  failed: Schema.Number,
  skipped: Schema.Number,
  cancelled: Schema.Number
}).annotate({ identifier: "CampaignStats" })

export const Campaign = Schema.Struct({
  id: Schema.String.annotate({ description: "`cmp_` followed by a sortable id" }),
  name: Schema.String,
  channel_id: Schema.NullOr(Schema.String),
  template: Schema.Record(Schema.String, Schema.Unknown),
  audience: CampaignAudience,
  scheduled_at: Schema.NullOr(Schema.String),
  status: CampaignStatus,
  audience_count: Schema.NullOr(Schema.Number).annotate({
    description: "Drafts: the leads matching now; null otherwise"
  }),
  stats: CampaignStats,
  error: Schema.NullOr(
    Schema.Struct({ code: Schema.String, message: Schema.String, provider_code: Schema.NullOr(Schema.Number) })
  ),
  paused: Schema.NullOr(
    Schema.Struct({
      reason: Schema.Literals(["channel_flagged", "channel_restricted"]),
      message: Schema.String
    })
  ).annotate({
    description:
      'While Meta flags or restricts the campaign\'s channel, its messages wait (docs §8.2, "paused"): why; null otherwise'
  }),
  created_at: Schema.String,
  updated_at: Schema.String,
  queued_at: Schema.NullOr(Schema.String),
  started_at: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.String),
  cancelled_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Campaign" })
export type Campaign = typeof Campaign.Type

const Name = Text.check(
  Schema.isMinLength(1, { message: "name must not be empty" }),
  Schema.isMaxLength(200, { message: "name must be at most 200 characters" })
)

const Instant = Text.check(
  Schema.makeFilter((text: string) => !Number.isNaN(Date.parse(text)) || "scheduled_at must be an ISO 8601 time")
)

// Each check names its field, so a caller sees every problem in `details` at once.
const bounded = Schema.makeFilter((audience: typeof CampaignAudience.Type) =>
  isUnbounded(audience)
    ? "audience must name tags, statuses or lead_ids: an audience of nobody would be everybody"
    : true
)
const knownPlaceholders = Schema.makeFilter((template: { components?: ReadonlyArray<unknown> | undefined }) => {
  const unknown = Placeholders.unknown(template.components ?? [])
  return unknown.length === 0
    ? true
    : `unknown placeholder ${unknown.join(", ")}: use {{lead.name}}, {{lead.phone}}, {{lead.email}} or {{lead.attributes.KEY}}`
})

const fields = {
  name: Name,
  channel_id: Schema.optional(Schema.NullOr(Text)),
  template: Template.check(knownPlaceholders),
  audience: AudienceInput.check(bounded),
  scheduled_at: Schema.optional(Schema.NullOr(Instant))
}

/** `POST /api/v1/campaigns` (§8.3): a draft. */
export const CreateCampaign = Schema.Struct(fields).annotate({ identifier: "CreateCampaign" })
export type CreateCampaign = typeof CreateCampaign.Type

/** `PATCH /api/v1/campaigns/{id}`: any create field, drafts only. */
export const UpdateCampaign = Schema.Struct({
  name: Schema.optional(fields.name),
  channel_id: fields.channel_id,
  template: Schema.optional(fields.template),
  audience: Schema.optional(fields.audience),
  scheduled_at: fields.scheduled_at
}).annotate({ identifier: "UpdateCampaign" })
export type UpdateCampaign = typeof UpdateCampaign.Type

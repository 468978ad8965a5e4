import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Campaign, CampaignStatus, CreateCampaign, UpdateCampaign } from "@leadline/core/campaigns/Campaign"
import { Recipient, RecipientStatus } from "@leadline/core/campaigns/Recipient"
import { Meta, PageQueryFields } from "@leadline/core/Pagination"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Conflict, Forbidden, MessageLimitReached, NotFound, ValidationError } from "../WireErrors.ts"

export const CampaignList = Schema.Struct({ campaigns: Schema.Array(Campaign), meta: Meta }).annotate({
  identifier: "CampaignList"
})
export const RecipientList = Schema.Struct({ recipients: Schema.Array(Recipient), meta: Meta }).annotate({
  identifier: "CampaignRecipientList"
})
export const DeletedCampaign = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotate({
  identifier: "DeletedCampaign"
})

const CampaignId = { id: Id.annotate({ description: "A campaign id, `cmp_…`" }) }
const READ = "Needs any campaigns scope (`campaigns:read`, `campaigns:write` or `campaigns:send`)."

export class CampaignsApi extends HttpApiGroup.make("campaigns")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: { ...PageQueryFields, status: Schema.optional(CampaignStatus) },
      success: CampaignList,
      error: Forbidden
    }).annotateMerge(OpenApi.annotations({ summary: "List campaigns", description: `Newest first. ${READ}` })),
    Idempotent.create("create", "/", {
      payload: CreateCampaign,
      success: Campaign,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Create a campaign (a draft)",
        description:
          "A WhatsApp template sent to an audience of leads: any of `tags` (and one of `statuses` when given), plus `lead_ids` (at most 1,000), minus any lead with one of `exclude_tags`; at least one of `tags`, `statuses`, `lead_ids`. Strings in `template.components` may hold `{{lead.name}}`, `{{lead.phone}}`, `{{lead.email}}` and `{{lead.attributes.KEY}}`, rendered per recipient; any other placeholder is refused. `audience_count` tells how many leads match now. Needs `campaigns:write`."
      })
    ),
    HttpApiEndpoint.get("get", "/:id", {
      params: CampaignId,
      success: Campaign,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Get a campaign", description: READ })),
    HttpApiEndpoint.patch("update", "/:id", {
      params: CampaignId,
      payload: UpdateCampaign,
      success: Campaign,
      error: [Forbidden, NotFound, ValidationError, Conflict]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Change a draft",
        description: "Any field of the create; only drafts (409 `conflict` otherwise). Needs `campaigns:write`."
      })
    ),
    HttpApiEndpoint.delete("delete", "/:id", {
      params: CampaignId,
      success: DeletedCampaign,
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete a draft",
        description: "Only drafts (409 `conflict` otherwise: cancel a queued one). Needs `campaigns:write`."
      })
    ),
    Idempotent.action("queue", "/:id/queue", {
      params: CampaignId,
      success: Campaign,
      error: [Forbidden, NotFound, Conflict, MessageLimitReached, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Queue a campaign",
        description:
          "In one transaction: the audience is snapshotted, each recipient gets a queued template message in its conversation (made `pending` when there was none), the usage of all of them is reserved (402 `message_limit_reached` and nothing queued when the plan cannot cover them) and `campaign.queued` is emitted. A recipient whose placeholder renders empty is `skipped`. Sending starts at `scheduled_at` when it is in the future, otherwise now, behind replies, at the channel's rate. 409 `conflict` for an empty audience, a campaign that is not a draft, or no usable channel; 400 naming `template.name`, `template.language` or `template.components` when the channel's synced template list refuses the template (docs/contract-messaging.md §8.7). Needs `campaigns:send`."
      })
    ),
    Idempotent.action("cancel", "/:id/cancel", {
      params: CampaignId,
      success: Campaign,
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Cancel a queued or sending campaign",
        description:
          "Messages not yet handed to WhatsApp are cancelled and their usage given back; sends already under way finish. 409 `conflict` for a draft (delete it) or a finished campaign. Needs `campaigns:send`."
      })
    ),
    HttpApiEndpoint.get("recipients", "/:id/recipients", {
      params: CampaignId,
      query: { ...PageQueryFields, status: Schema.optional(RecipientStatus) },
      success: RecipientList,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "List a campaign's recipients",
        description: `In lead id order, each with its message's status and error (a lead deleted since shows as \`skipped\`, \`lead_deleted\`). A draft has none. ${READ}`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/campaigns")
  .annotateMerge(
    OpenApi.annotations({
      title: "Campaigns",
      description: "Template broadcasts to an audience of leads (docs/contract-messaging.md §8)."
    })
  ) {}

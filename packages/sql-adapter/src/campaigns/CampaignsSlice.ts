import * as Slice from "../Slice.ts"
import * as Campaigns0008 from "./migrations/0008_campaigns.ts"
import * as RecipientsWithoutCampaignKey0024 from "./migrations/0024_recipients_without_campaign_key.ts"
import * as SqlCampaigns from "./SqlCampaigns.ts"

/** Campaigns and their recipients; their messages live in `messages` (docs/contract-messaging.md §8). */
export const slice = Slice.make({
  name: "campaigns",
  layer: SqlCampaigns.layer,
  migrations: [Campaigns0008.migration, RecipientsWithoutCampaignKey0024.migration]
})

import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as CampaignEvents from "./CampaignEvents.ts"
import { CampaignProgress } from "./CampaignProgress.ts"
import * as CampaignReactions from "./CampaignReactions.ts"
import { Campaigns } from "./Campaigns.ts"

export const slice = Slice.make({
  name: "campaigns",
  layer: Campaigns.layer.pipe(Layer.provide(CampaignProgress.layer)),
  events: [CampaignEvents.queued, CampaignEvents.completed],
  reactions: [CampaignReactions.followMessages.pipe(Layer.provide(CampaignProgress.layer))]
})

import { Layer } from "effect"
import { CampaignProgress } from "../campaigns/CampaignProgress.ts"
import * as Slice from "../Slice.ts"
import * as LeadEvents from "./LeadEvents.ts"
import * as LeadMetrics from "./LeadMetrics.ts"
import { Leads } from "./Leads.ts"

export const slice = Slice.make({
  name: "leads",
  layer: Leads.layer.pipe(Layer.provide(CampaignProgress.layer)),
  events: [LeadEvents.created, LeadEvents.deleted],
  metrics: LeadMetrics.metrics
})

import * as Slice from "../Slice.ts"
import * as LeadEvents from "./LeadEvents.ts"
import * as LeadMetrics from "./LeadMetrics.ts"
import { LeadRemoval } from "./LeadRemoval.ts"
import { Leads } from "./Leads.ts"

export const slice = Slice.make({
  name: "leads",
  layer: Leads.layer,
  events: [LeadEvents.created, LeadEvents.updated, LeadEvents.deleted],
  metrics: LeadMetrics.metrics,
  hooks: [LeadRemoval.layer]
})

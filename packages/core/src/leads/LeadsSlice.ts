import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as LeadEvents from "./LeadEvents.ts"
import * as LeadMetrics from "./LeadMetrics.ts"
import { LeadRemoval } from "./LeadRemoval.ts"
import { LeadJobRunner } from "./LeadJobRunner.ts"
import { LeadJobs } from "./LeadJobs.ts"
import { Leads } from "./Leads.ts"

export const slice = Slice.make({
  name: "leads",
  // Imports, exports and bulk changes; `LeadJobRunner.loop` runs the jobs.
  layer: Layer.mergeAll(Leads.layer, LeadJobs.layer, LeadJobRunner.layer()),
  events: [LeadEvents.created, LeadEvents.updated, LeadEvents.deleted],
  metrics: LeadMetrics.metrics,
  hooks: [LeadRemoval.layer]
})

import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as LeadCountsStriped0003 from "./migrations/0003_lead_counts_striped.ts"
import * as LeadSearchIndexes0038 from "./migrations/0038_lead_search_indexes.ts"
import * as LeadJobs0039 from "./migrations/0039_lead_jobs.ts"
import * as LeadTalliesPerStatement0042 from "./migrations/0042_lead_tallies_per_statement.ts"
import * as LeadSearchCounts0046 from "./migrations/0046_lead_search_counts.ts"
import * as SqlLeadJobs from "./SqlLeadJobs.ts"
import * as SqlLeads from "./SqlLeads.ts"

// Its tables came with the historical src/migrations/0001_accounts_leads_idempotency_events.ts.
export const slice = Slice.make({
  name: "leads",
  layer: Layer.mergeAll(SqlLeads.layer, SqlLeadJobs.layer),
  migrations: [
    LeadCountsStriped0003.migration,
    LeadSearchIndexes0038.migration,
    LeadJobs0039.migration,
    LeadTalliesPerStatement0042.migration,
    LeadSearchCounts0046.migration
  ]
})

import { Effect, Schema } from "effect"
import * as Metrics from "../metrics/Metrics.ts"
import { LeadStatus } from "./Lead.ts"
import { LeadsRepo } from "./LeadsRepo.ts"

const Count = Schema.Int

export const LeadsSummary = Schema.Struct({
  created: Count.annotate({ description: "Leads created in the range" }),
  by_status: Schema.Struct(
    Object.fromEntries(LeadStatus.literals.map((status) => [status, Count])) as Record<LeadStatus, typeof Count>
  ).annotate({ description: "The leads created in the range, by their status now (there is no status history)" }),
  conversion_rate: Schema.Number.annotate({ description: "won ÷ created, to 4 decimals; 0 when none were created" })
}).annotate({ identifier: "LeadsSummary" })

export const metrics = Metrics.make({
  key: "leads",
  summary: LeadsSummary,
  summarize: (accountId, window) =>
    Effect.gen(function* () {
      const counted = yield* (yield* LeadsRepo).statusesOfCreated(accountId, window)
      const byStatus = Object.fromEntries(
        LeadStatus.literals.map((status) => [status, counted[status] ?? 0])
      ) as Record<LeadStatus, number>
      const created = Object.values(byStatus).reduce((sum, n) => sum + n, 0)
      return {
        created,
        by_status: byStatus,
        conversion_rate: created === 0 ? 0 : Math.round((byStatus.won / created) * 10_000) / 10_000
      }
    }),
  series: {
    leads_created: {
      description: "Leads created",
      values: (accountId, bounds) => LeadsRepo.use((repo) => repo.createdPerBucket(accountId, bounds))
    }
  }
})

import { expect } from "vitest"
import { call } from "../Http.ts"
import { createLead, readLead, unknownLeadId } from "../leads/LeadsResource.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

export const SUMMARY = "/api/v1/analytics/summary"
export const TIMESERIES = "/api/v1/analytics/timeseries"

const read = (path: string) => async (target: Target, key: string, query: string) => {
  const reply = await call(target, "GET", `${path}${query}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}

/** GET the summary with this query (`?from=…`), expecting 200. */
export const summaryOf = read(SUMMARY)
/** GET a timeseries with this query (`?metric=…`), expecting 200. */
export const timeseriesOf = read(TIMESERIES)

/** Analytics: two reads of the caller's own account; what they count are the other resources' rows. */
export const resource: Resource.Resource = {
  name: "analytics",
  routes: [
    {
      method: "GET",
      path: SUMMARY,
      needs: ["analytics:read"],
      succeeds: 200,
      request: async () => ({ path: SUMMARY })
    },
    {
      method: "GET",
      path: TIMESERIES,
      needs: ["analytics:read"],
      succeeds: 200,
      query: "metric=leads_created",
      request: async () => ({ path: `${TIMESERIES}?metric=leads_created` })
    }
  ],
  // No route takes an id; what the account made (a lead, counted here) must not show through another account's reads.
  isolation: {
    noun: "lead",
    make: async ({ target }, key) => (await createLead(target, key)).id,
    read: ({ target }, key, id) => readLead(target, key, id),
    unknownId: unknownLeadId
  },
  ledger: {
    tables: [
      {
        name: "analytics_tallies",
        account: "account_id",
        rows: Resource.uncounted(
          "kept by triggers: a row per metric, 15-minute slot and stripe that the account's leads, conversations, messages and orders touch"
        )
      }
    ]
  }
}

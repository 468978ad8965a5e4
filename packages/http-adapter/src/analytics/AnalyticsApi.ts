import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Summary, SummaryQuery, Timeseries, TimeseriesQuery } from "@leadline/core/analytics/AnalyticsQuery"
import { Authentication } from "../Authentication.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Forbidden, ValidationError } from "../WireErrors.ts"

const RANGE =
  "`from` and `to` are local calendar dates in `tz` (an IANA name, default `UTC`), both included; the default range is the last 30 days up to today. A range past its span (31 dates for `hour`, 366 for `day`, five years for `week`, `month` and the summary), `to` before `from`, an unknown zone or a malformed date is a 400 naming the field."

export class AnalyticsApi extends HttpApiGroup.make("analytics")
  .add(
    HttpApiEndpoint.get("summary", "/summary", {
      query: SummaryQuery,
      success: Summary,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "The account's numbers for a range",
        description: `Leads created (by their status now, and won ÷ created), messages in and out (outbound as metering counts them, and those an agent wrote), conversations started and the time to their first response, orders placed and cancelled, and revenue per currency. ${RANGE} Needs \`analytics:read\`.`
      })
    ),
    HttpApiEndpoint.get("timeseries", "/timeseries", {
      query: TimeseriesQuery,
      success: Timeseries,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "One metric per bucket",
        description: `Every bucket of the range, zero-filled, each labelled with its local start and the offset then (\`2026-10-25T00:00:00+02:00\`), right across daylight-saving changes. \`revenue\` needs \`currency\` and counts minor units; the others refuse it. ${RANGE} Needs \`analytics:read\`.`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/analytics")
  .annotateMerge(
    OpenApi.annotations({
      title: "Analytics",
      description:
        "Counted live from the account's data (docs/contract-commerce-ai.md §7): each resource's slice counts its own metrics."
    })
  ) {}

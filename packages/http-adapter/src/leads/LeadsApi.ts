import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { CreateLead, DeletedLead, Lead, UpdateLead } from "@leadline/core/leads/Lead"
import { LeadListMeta, LeadListQuery } from "@leadline/core/leads/LeadSearch"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Conflict, Forbidden, NotFound, ValidationError } from "../WireErrors.ts"
import * as LeadJobsApi from "./LeadJobsApi.ts"

export const LeadList = Schema.Struct({ leads: Schema.Array(Lead), meta: LeadListMeta }).annotate({
  identifier: "LeadList"
})

const LeadId = { id: Id.annotate({ description: "A lead id, `ld_…`" }) }

export class LeadsApi extends HttpApiGroup.make("leads")
  .add(
    HttpApiEndpoint.get("list", "/", { query: LeadListQuery, success: LeadList, error: [Forbidden, ValidationError] })
      // A misspelt filter would otherwise be dropped and list every lead: unknown parameters are a 400.
      .annotate(HttpApi.QueryParseOptions, { onExcessProperty: "error", errors: "all" })
      .annotateMerge(
        OpenApi.annotations({
          summary: "List and find leads",
          description:
            "Newest first (`created_at` desc, then `id` desc) unless `sort` says otherwise. `q` searches names and emails by prefix (any case) and phones by their digits; `status`, `tag`, `assigned_user_id` and the times filter, all at once. Pages by `offset`, or by cursor with `starting_after` or `ending_before` (a lead id of the list), so that a deep page costs what the first does; `meta` gives both. A parameter that is unknown or malformed is a 400 naming it. Needs `leads:read` or `leads:write`."
        })
      ),
    Idempotent.create("create", "/", {
      payload: CreateLead,
      success: Lead,
      error: [Forbidden, Conflict, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Create a lead",
        description:
          "Phone numbers are normalised to E.164 and unique per account (409 `conflict` otherwise). Emits `lead.created`. Needs `leads:write`."
      })
    ),
    HttpApiEndpoint.get("get", "/:id", { params: LeadId, success: Lead, error: [Forbidden, NotFound] }).annotateMerge(
      OpenApi.annotations({ summary: "Get a lead", description: "Needs `leads:read` or `leads:write`." })
    ),
    HttpApiEndpoint.patch("update", "/:id", {
      params: LeadId,
      payload: UpdateLead,
      success: Lead,
      error: [Forbidden, NotFound, Conflict, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Update a lead",
        description: "Only the fields given change; `null` clears `email` or `assigned_user_id`. Needs `leads:write`."
      })
    ),
    // The static paths (/imports, /bulk, /jobs, /export) are matched before /:id.
    LeadJobsApi.importLeads,
    LeadJobsApi.bulkChange,
    LeadJobsApi.listJobs,
    LeadJobsApi.getJob,
    LeadJobsApi.exportLeads,
    HttpApiEndpoint.delete("delete", "/:id", {
      params: LeadId,
      success: DeletedLead,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({ summary: "Delete a lead", description: "Emits `lead.deleted`. Needs `leads:write`." })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/leads")
  .annotateMerge(OpenApi.annotations({ title: "Leads", description: "The people a team is talking to." })) {}

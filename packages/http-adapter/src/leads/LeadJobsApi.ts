import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  BulkChange,
  ExportQuery,
  ImportQuery,
  JobListQuery,
  LeadJob,
  MAX_ERRORS,
  MAX_ROWS
} from "@leadline/core/leads/LeadJob"
import * as Pagination from "@leadline/core/Pagination"
import { Id } from "@leadline/core/Text"
import { Idempotent, IdempotencyHeaders } from "../Idempotent.ts"
import { Forbidden, NotFound, ValidationError } from "../WireErrors.ts"

/**
 * Imports, exports and bulk changes of leads (docs/contract.md, "Imports, exports and bulk changes"),
 * added to the leads group (`LeadsApi.ts`): their paths are under `/api/v1/leads`.
 */

// The import's and export's media types; here, not beside the CSV library (`LeadFiles.ts`), which the
// typed client (and so the dashboard) must not load.
export const CSV = "text/csv"
export const NDJSON = "application/x-ndjson"

export const LeadJobList = Schema.Struct({ jobs: Schema.Array(LeadJob), meta: Pagination.Meta }).annotate({
  identifier: "LeadJobList"
})

const Accepted = LeadJob.pipe(HttpApiSchema.status(202))

const strict = { onExcessProperty: "error", errors: "all" } as const

export const importLeads = HttpApiEndpoint.post("import", "/imports", {
  query: ImportQuery,
  payload: [
    Schema.String.pipe(HttpApiSchema.asText({ contentType: CSV })),
    Schema.String.pipe(HttpApiSchema.asText({ contentType: NDJSON }))
  ],
  headers: IdempotencyHeaders,
  success: Accepted,
  error: [Forbidden, ValidationError]
})
  .middleware(Idempotent)
  .annotate(HttpApi.QueryParseOptions, strict)
  .annotateMerge(
    OpenApi.annotations({
      summary: "Import leads from a file",
      description: `The body is the file: CSV (\`Content-Type: text/csv\`, a header row, UTF-8) or NDJSON (\`application/x-ndjson\`, one JSON object a line), up to ${MAX_ROWS} rows. Each row is checked as \`POST /api/v1/leads\` checks its body; a lead whose phone the account has is updated with the row's fields (\`on_conflict=update\`) or left (\`skip\`). Answers 202 at once with the job; \`GET /api/v1/leads/jobs/{id}\` shows its counts and the first ${MAX_ERRORS} refused rows. Created leads emit \`lead.created\`. A file that cannot be read, or a mapping naming a column the file lacks, is a 400 and starts nothing. Needs \`leads:write\`.`
    })
  )

export const bulkChange = HttpApiEndpoint.post("bulk", "/bulk", {
  payload: BulkChange,
  headers: IdempotencyHeaders,
  success: Accepted,
  error: [Forbidden, ValidationError]
})
  .middleware(Idempotent)
  .annotateMerge(
    OpenApi.annotations({
      summary: "Change every lead of a filtered list",
      description:
        "Adds tags, removes tags and sets or clears the assignee of every lead that `filter` (the filters of `GET /api/v1/leads`) matches, as a job: 202 at once, progress at `GET /api/v1/leads/jobs/{id}`. A lead changed gets a new `updated_at`; one that has the values already is `unchanged`. Needs `leads:write`."
    })
  )

export const listJobs = HttpApiEndpoint.get("jobs", "/jobs", {
  query: JobListQuery,
  success: LeadJobList,
  error: [Forbidden, ValidationError]
}).annotateMerge(
  OpenApi.annotations({
    summary: "List lead jobs",
    description:
      "The account's imports and bulk changes, newest first; `kind` keeps one kind. Needs `leads:read` or `leads:write`."
  })
)

export const getJob = HttpApiEndpoint.get("job", "/jobs/:id", {
  params: { id: Id.annotate({ description: "A job id, `ljob_…`" }) },
  success: LeadJob,
  error: [Forbidden, NotFound]
}).annotateMerge(
  OpenApi.annotations({
    summary: "Get a lead job",
    description:
      "Its state (`queued`, `running`, `succeeded`, `failed`), its counts so far and its refused rows (row, field, reason). Needs `leads:read` or `leads:write`."
  })
)

export const exportLeads = HttpApiEndpoint.get("export", "/export", {
  query: ExportQuery,
  success: HttpApiSchema.StreamUint8Array({ contentType: CSV }).annotate({
    description: "The leads as CSV (a header row, then one lead a row) or NDJSON (one lead a line), streamed"
  }),
  error: [Forbidden, ValidationError]
})
  .annotate(HttpApi.QueryParseOptions, strict)
  .annotateMerge(
    OpenApi.annotations({
      summary: "Export leads",
      description:
        "Every lead that the filters of `GET /api/v1/leads` match, in the list's order (`sort`), streamed as it is read a page at a time: CSV (`format=csv`, the default; tags joined with `;`, attributes as JSON, the columns an import reads) or NDJSON (`format=ndjson`, each line a lead object). Needs `leads:read` or `leads:write`."
    })
  )

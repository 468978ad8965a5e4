import { Schema } from "effect"
import { PageQueryFields } from "../Pagination.ts"
import { jsonProblem, Text } from "../Text.ts"
import { LeadListQuery } from "./LeadSearch.ts"

/**
 * A job over many leads (docs/contract.md, "Imports, exports and bulk changes"): an import of a file,
 * or one change to every lead of a filtered list. It is answered at once (202) and runs in the
 * background; its GET shows how far it got and which rows failed.
 */

export const LeadJobKind = Schema.Literals(["import", "bulk"])
export type LeadJobKind = typeof LeadJobKind.Type

export const LeadJobState = Schema.Literals(["queued", "running", "succeeded", "failed"])
export type LeadJobState = typeof LeadJobState.Type

/** The most row errors a job keeps: the first ones, in row order; `errors_truncated` says when there were more. */
export const MAX_ERRORS = 1_000

/** The most rows an import takes. */
export const MAX_ROWS = 100_000

export const RowError = Schema.Struct({
  row: Schema.NullOr(Schema.Int).annotate({
    description:
      "The row of the file (CSV: the header is row 1, as a spreadsheet numbers them; NDJSON: the line); null in a bulk change"
  }),
  lead_id: Schema.NullOr(Schema.String).annotate({ description: "The lead a bulk change could not change" }),
  field: Schema.NullOr(Schema.String).annotate({ description: "The lead's field that was refused (`phone`)" }),
  reason: Schema.String
}).annotate({ identifier: "LeadJobRowError" })
export type RowError = typeof RowError.Type

export const LeadJobCounts = Schema.Struct({
  read: Schema.Int.annotate({ description: "Rows read (an import) or leads matched (a bulk change) so far" }),
  created: Schema.Int,
  updated: Schema.Int,
  unchanged: Schema.Int.annotate({
    description: "Rows whose lead exists and had these values already, or was skipped (`on_conflict=skip`)"
  }),
  failed: Schema.Int
}).annotate({ identifier: "LeadJobCounts" })
export type LeadJobCounts = typeof LeadJobCounts.Type

export const LeadJob = Schema.Struct({
  id: Schema.String.annotate({ description: "`ljob_` followed by a sortable id" }),
  kind: LeadJobKind,
  state: LeadJobState,
  dry_run: Schema.Boolean.annotate({ description: "Counted and checked, nothing written" }),
  total_rows: Schema.NullOr(Schema.Int).annotate({
    description: "The rows of the file (an import); null for a bulk change"
  }),
  counts: LeadJobCounts,
  errors: Schema.Array(RowError).annotate({ description: `The first ${MAX_ERRORS} rows refused, in order` }),
  errors_truncated: Schema.Boolean.annotate({ description: `More than ${MAX_ERRORS} rows were refused` }),
  failure: Schema.NullOr(Schema.String).annotate({ description: "Why a `failed` job stopped" }),
  created_at: Schema.String,
  updated_at: Schema.String,
  finished_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "LeadJob" })
export type LeadJob = typeof LeadJob.Type

export const ZERO: LeadJobCounts = { read: 0, created: 0, updated: 0, unchanged: 0, failed: 0 }

export const isDone = (job: LeadJob): boolean => job.state === "succeeded" || job.state === "failed"

/** A lead field an import can set, or `attributes.<key>` for one attribute. */
export const IMPORT_FIELDS = ["name", "phone", "email", "tags", "status", "assigned_user_id", "attributes"] as const

/**
 * Whether an import can set this field: a lead field, or `attributes.<key>` for one attribute, a key a
 * store can keep (the mapping is stored with its job: jsonb takes no NUL and no lone surrogate).
 */
export const isMappingField = (field: string): boolean =>
  (IMPORT_FIELDS as ReadonlyArray<string>).includes(field) ||
  (!jsonProblem(field) && /^attributes\.[^.]{1,64}$/.test(field))

export const MAPPING_FIELD_MESSAGE = `must be one of ${IMPORT_FIELDS.join(", ")} or attributes.<key>`

/** Lead field → the column (CSV) or key (NDJSON) it is read from; its fields are checked by `isMappingField`. */
export const Mapping = Schema.Record(
  Schema.String,
  Text.check(
    Schema.isMinLength(1, { message: "a column name must not be empty" }),
    Schema.isMaxLength(200, { message: "a column name must be at most 200 characters" })
  )
).annotate({ identifier: "LeadImportMapping" })
export type Mapping = typeof Mapping.Type

const BooleanString = Schema.Literals(["true", "false"]).annotate({ description: "`true` or `false`" })

/** The query of `POST /api/v1/leads/imports`; the body is the file. */
export const ImportQuery = Schema.Struct({
  mapping: Schema.optional(
    Schema.String.annotate({
      description:
        'JSON object of lead field → column (CSV) or key (NDJSON), e.g. `{"name":"Full Name","phone":"Mobile","attributes.city":"City"}`; a field left out is read from the column of its own name'
    })
  ),
  dry_run: Schema.optional(BooleanString.annotate({ description: "`true`: check and count every row, write nothing" })),
  on_conflict: Schema.optional(
    Schema.Literals(["update", "skip"]).annotate({
      description:
        "A row whose phone is a lead's already: `update` it (the default) with the row's fields, or `skip` it"
    })
  )
}).annotate({ identifier: "LeadImportQuery" })
export type ImportQuery = typeof ImportQuery.Type

export type ImportFormat = "csv" | "ndjson"

/** What an import job keeps of its request. */
export interface ImportSpec {
  readonly kind: "import"
  readonly format: ImportFormat
  readonly mapping: Mapping
  readonly onConflict: "update" | "skip"
}

/** One record of the file: its row number and its values by column (CSV: strings) or key (NDJSON). */
export interface ImportRow {
  readonly row: number
  readonly values: Readonly<Record<string, unknown>>
  /** Why the transport could not read the row as a record (a CSV row of another width, a line not JSON). */
  readonly problem?: string | undefined
}

/** The rows a job handles in one transaction: one chunk of the stored file, one page of a bulk change. */
export const CHUNK_ROWS = 1_000

const TagList = Schema.Array(
  Text.check(
    Schema.isMinLength(1, { message: "a tag must not be empty" }),
    Schema.isMaxLength(64, { message: "a tag must be at most 64 characters" })
  )
).check(
  Schema.isMinLength(1, { message: "give at least one tag" }),
  Schema.isMaxLength(50, { message: "at most 50 tags" })
)

/** The filters of `GET /api/v1/leads` a bulk change and an export take (not its page). */
const {
  limit: _limit,
  offset: _offset,
  starting_after: _after,
  ending_before: _before,
  ...filterFields
} = LeadListQuery.fields

export const LeadFilterQuery = Schema.Struct(filterFields).annotate({ identifier: "LeadFilterQuery" })
export type LeadFilterQuery = typeof LeadFilterQuery.Type

/** The body of `POST /api/v1/leads/bulk`. */
export const BulkChange = Schema.Struct({
  filter: LeadFilterQuery.annotate({
    description: "The leads to change: the filters of `GET /api/v1/leads` (`q`, `status`, `tag`, …); `{}` is every lead"
  }),
  add_tags: Schema.optional(TagList),
  remove_tags: Schema.optional(TagList),
  assigned_user_id: Schema.optional(
    Schema.NullOr(Schema.String).annotate({ description: "Assign every lead to this user; `null` unassigns" })
  ),
  dry_run: Schema.optional(Schema.Boolean)
}).annotate({ identifier: "LeadBulkChange" })
export type BulkChange = typeof BulkChange.Type

/** What a bulk job keeps of its request. */
export interface BulkSpec {
  readonly kind: "bulk"
  readonly filter: LeadFilterQuery
  readonly addTags: ReadonlyArray<string>
  readonly removeTags: ReadonlyArray<string>
  /** A user id, `null` to unassign, undefined to leave as it is. */
  readonly assignTo: string | null | undefined
}

export type Spec = ImportSpec | BulkSpec

/** The query of `GET /api/v1/leads/export`: the list's filters and order, and the format. */
export const ExportQuery = Schema.Struct({
  ...filterFields,
  format: Schema.optional(
    Schema.Literals(["csv", "ndjson"]).annotate({ description: "`csv` (the default, with a header row) or `ndjson`" })
  )
}).annotate({ identifier: "LeadExportQuery" })
export type ExportQuery = typeof ExportQuery.Type

/** The query of `GET /api/v1/leads/jobs`. */
export const JobListQuery = Schema.Struct({
  ...PageQueryFields,
  kind: Schema.optional(LeadJobKind)
}).annotate({ identifier: "LeadJobListQuery" })
export type JobListQuery = typeof JobListQuery.Type

export const fresh = (
  id: string,
  kind: LeadJobKind,
  dryRun: boolean,
  totalRows: number | null,
  now: string
): LeadJob => ({
  id,
  kind,
  state: "queued",
  dry_run: dryRun,
  total_rows: totalRows,
  counts: ZERO,
  errors: [],
  errors_truncated: false,
  failure: null,
  created_at: now,
  updated_at: now,
  finished_at: null
})

/** The job after one more chunk: its counts added, its errors kept up to the cap. */
export const progressed = (
  job: LeadJob,
  counts: LeadJobCounts,
  errors: ReadonlyArray<RowError>,
  now: string
): LeadJob => {
  const room = MAX_ERRORS - job.errors.length
  return {
    ...job,
    state: "running",
    counts: {
      read: job.counts.read + counts.read,
      created: job.counts.created + counts.created,
      updated: job.counts.updated + counts.updated,
      unchanged: job.counts.unchanged + counts.unchanged,
      failed: job.counts.failed + counts.failed
    },
    errors: room > 0 ? [...job.errors, ...errors.slice(0, room)] : job.errors,
    errors_truncated: job.errors_truncated || errors.length > room,
    updated_at: now
  }
}

import { Context, Effect, Layer, Schema, Stream } from "effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import {
  decodeInput,
  type InvalidInput,
  invalidField,
  invalidInput,
  NotFound,
  type PermissionDenied,
  unknownAssignee
} from "../Errors.ts"
import * as Ids from "../Ids.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import type { Lead } from "./Lead.ts"
import * as LeadImport from "./LeadImport.ts"
import * as Job from "./LeadJob.ts"
import {
  BulkChange,
  CHUNK_ROWS,
  ExportQuery,
  type ImportFormat,
  ImportQuery,
  type ImportRow,
  JobListQuery,
  type LeadJob,
  Mapping,
  MAX_ROWS
} from "./LeadJob.ts"
import { LeadJobsRepo } from "./LeadJobsRepo.ts"
import * as LeadSearch from "./LeadSearch.ts"
import { LeadsRepo } from "./LeadsRepo.ts"

type Needs = CurrentPrincipal

/** A file as the transport read it: its format, its records, and (CSV) its header. */
export interface ImportFile {
  readonly format: ImportFormat
  readonly rows: ReadonlyArray<ImportRow>
  /** The CSV's column names; undefined for NDJSON. */
  readonly header?: ReadonlyArray<string> | undefined
}

/** How many leads an export reads from the store at a time. */
export const EXPORT_PAGE = 500

/**
 * Imports, exports and bulk changes of leads (docs/contract.md, "Imports, exports and bulk changes").
 * An import or bulk change is checked here and stored as a job; `LeadJobRunner` does the work.
 */
export class LeadJobs extends Context.Service<
  LeadJobs,
  {
    readonly startImport: (
      file: ImportFile,
      query: ImportQuery
    ) => Effect.Effect<LeadJob, PermissionDenied | InvalidInput, Needs>
    readonly startBulk: (body: BulkChange) => Effect.Effect<LeadJob, PermissionDenied | InvalidInput, Needs>
    readonly get: (id: string) => Effect.Effect<LeadJob, PermissionDenied | NotFound, Needs>
    readonly list: (
      query?: JobListQuery
    ) => Effect.Effect<{ jobs: ReadonlyArray<LeadJob>; meta: Pagination.Meta }, PermissionDenied | InvalidInput, Needs>
    /**
     * The leads of a filtered list in its order, a page at a time (`EXPORT_PAGE`), each page read by
     * cursor after the last: an export of any size holds one page. Checked before the first page.
     */
    readonly exportLeads: (
      query: ExportQuery
    ) => Effect.Effect<Stream.Stream<ReadonlyArray<Lead>>, PermissionDenied | InvalidInput, Needs>
  }
>()("core/LeadJobs") {
  static readonly layer: Layer.Layer<LeadJobs, never, LeadJobsRepo | LeadsRepo | AccountsRepo | Transactor> =
    Layer.effect(
      LeadJobs,
      Effect.gen(function* () {
        const jobs = yield* LeadJobsRepo
        const leads = yield* LeadsRepo
        const accounts = yield* AccountsRepo
        const transactor = yield* Transactor

        const decodeImportQuery = decodeInput(ImportQuery, "query")
        const decodeBulk = decodeInput(BulkChange, "body")
        const decodeExport = decodeInput(Schema.toType(ExportQuery), "query")
        const decodeJobList = decodeInput(Schema.toType(JobListQuery), "query")
        const decodeMapping = Schema.decodeUnknownEffect(Mapping)

        const mappingOf = Effect.fnUntraced(function* (raw: string | undefined) {
          if (raw === undefined) return {}
          let parsed: unknown
          try {
            parsed = JSON.parse(raw)
          } catch {
            return yield* invalidField("mapping", "must be a JSON object of lead field to column", "query")
          }
          const mapping = yield* Effect.mapError(decodeMapping(parsed), (error) => {
            const first = invalidInput(error, "query").details[0]
            const path = first === undefined || first.path === "" ? "mapping" : `mapping.${first.path}`
            return invalidField(path, first?.message ?? "must be a JSON object of lead field to column", "query")
          })
          const unknown = Object.keys(mapping).find((field) => !Job.isMappingField(field))
          if (unknown !== undefined)
            return yield* invalidField(`mapping.${unknown}`, Job.MAPPING_FIELD_MESSAGE, "query")
          return mapping
        })

        const startImport = Effect.fnUntraced(function* (file: ImportFile, raw: ImportQuery) {
          const principal = yield* authorize("leads.create")
          yield* authorize("leads.update")
          yield* authorize("leads.assign")
          const query = yield* decodeImportQuery(raw)
          const mapping = yield* mappingOf(query.mapping)
          if (file.rows.length === 0) return yield* invalidField("body", "the file has no rows")
          if (file.rows.length > MAX_ROWS) return yield* invalidField("body", `at most ${MAX_ROWS} rows`)
          if (file.header !== undefined) {
            const missing = LeadImport.missingColumn(mapping, file.header)
            if (missing !== undefined) {
              // Named by the mapping's field even when no mapping was given: that is where the fix goes.
              return yield* invalidField(
                `mapping.${missing.field}`,
                `the file has no column "${missing.column}"`,
                "query"
              )
            }
          }
          const job = Job.fresh(
            yield* Ids.make("ljob"),
            "import",
            query.dry_run === "true",
            file.rows.length,
            yield* Ids.now
          )
          const chunks: Array<ReadonlyArray<ImportRow>> = []
          for (let i = 0; i < file.rows.length; i += CHUNK_ROWS) chunks.push(file.rows.slice(i, i + CHUNK_ROWS))
          const spec: Job.ImportSpec = {
            kind: "import",
            format: file.format,
            mapping,
            onConflict: query.on_conflict ?? "update"
          }
          yield* transactor.withTransaction(jobs.create(principal.accountId, job, spec, chunks))
          return job
        }, Tracing.span("LeadJobs.startImport"))

        const startBulk = Effect.fnUntraced(function* (raw: BulkChange) {
          const principal = yield* authorize("leads.update")
          const body = yield* decodeBulk(raw)
          if (body.add_tags === undefined && body.remove_tags === undefined && body.assigned_user_id === undefined) {
            return yield* invalidField("add_tags", "give add_tags, remove_tags or assigned_user_id")
          }
          const both = body.remove_tags?.find((tag) => body.add_tags?.includes(tag) === true)
          if (both !== undefined) return yield* invalidField("remove_tags", `"${both}" is in add_tags too`)
          const assignTo =
            body.assigned_user_id === undefined ? undefined : (body.assigned_user_id?.toLowerCase() ?? null)
          if (assignTo !== undefined) {
            yield* authorize("leads.assign")
            if (assignTo !== null && (yield* accounts.findUser(principal.accountId, assignTo)) === undefined) {
              return yield* unknownAssignee()
            }
          }
          const job = Job.fresh(yield* Ids.make("ljob"), "bulk", body.dry_run === true, null, yield* Ids.now)
          const spec: Job.BulkSpec = {
            kind: "bulk",
            filter: body.filter,
            addTags: [...new Set(body.add_tags ?? [])],
            removeTags: [...new Set(body.remove_tags ?? [])],
            assignTo
          }
          yield* transactor.withTransaction(jobs.create(principal.accountId, job, spec, []))
          return job
        }, Tracing.span("LeadJobs.startBulk"))

        const get = Effect.fnUntraced(function* (id: string) {
          const principal = yield* authorize("leads.view")
          const job = yield* jobs.find(principal.accountId, id)
          return job ?? (yield* new NotFound({ resource: "lead job", id }))
        }, Tracing.span("LeadJobs.get"))

        const list = Effect.fnUntraced(function* (raw: JobListQuery = {}) {
          const principal = yield* authorize("leads.view")
          const query = yield* decodeJobList(raw)
          const page = Pagination.page(query)
          const listed = yield* jobs.list(principal.accountId, page, query.kind)
          return { jobs: listed.items, meta: Pagination.meta(page, listed.total) }
        }, Tracing.span("LeadJobs.list"))

        const exportLeads = Effect.fnUntraced(function* (raw: ExportQuery) {
          const principal = yield* authorize("leads.view")
          const query = yield* decodeExport(raw)
          const filter = LeadSearch.filterOf(query)
          const order = LeadSearch.orderOf(query.sort)
          return pages(leads, principal.accountId, filter, order, EXPORT_PAGE)
        }, Tracing.span("LeadJobs.exportLeads"))

        return LeadJobs.of({ startImport, startBulk, get, list, exportLeads })
      })
    )
}

/** Pages of a filtered list in its order, each read by cursor after the last page's last lead. */
export const pages = (
  repo: LeadsRepo["Service"],
  accountId: string,
  filter: LeadSearch.LeadFilter,
  order: LeadSearch.LeadOrder,
  limit: number
): Stream.Stream<ReadonlyArray<Lead>> =>
  Stream.unfold<Lead | null | undefined, ReadonlyArray<Lead>, never, never>(null, (anchor) =>
    anchor === undefined
      ? Effect.succeed(undefined)
      : Effect.map(
          repo.search(accountId, {
            filter,
            order,
            window: anchor === null ? { by: "offset", offset: 0 } : { by: "after", anchor },
            limit
          }),
          (page) =>
            page.items.length === 0
              ? undefined
              : ([page.items, page.hasMore ? page.items[page.items.length - 1]! : undefined] as const)
        )
  )

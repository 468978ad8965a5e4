import { Effect, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { invalidField } from "@leadline/core/Errors"
import { LeadJobs } from "@leadline/core/leads/LeadJobs"
import { Leads } from "@leadline/core/leads/Leads"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as Respond from "../Respond.ts"
import * as LeadFiles from "./LeadFiles.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "leads",
  Effect.fnUntraced(function* (handlers) {
    const leads = yield* Leads
    const jobs = yield* LeadJobs
    return handlers
      .handle("list", ({ query }) => wire(leads.list(query)).pipe(Respond.ok))
      .handle("create", ({ payload }) => wire(leads.create(payload)).pipe(Respond.created))
      .handle("get", ({ params }) => wire(leads.get(params.id)).pipe(Respond.ok))
      .handle("update", ({ params, payload }) => wire(leads.update(params.id, payload)).pipe(Respond.ok))
      .handle("delete", ({ params }) => wire(leads.remove(params.id)).pipe(Respond.ok))
      .handle("import", ({ payload, query, request }) =>
        wire(
          Effect.gen(function* () {
            // The body guard let only these two types through; the type says how to read the file.
            const format = LeadFiles.formatOf(request.headers["content-type"])
            if (format === undefined) return yield* invalidField("body", "must be text/csv or application/x-ndjson")
            return yield* jobs.startImport(yield* LeadFiles.read(format, payload), query)
          })
        ).pipe(Respond.json(202))
      )
      .handle("bulk", ({ payload }) => wire(jobs.startBulk(payload)).pipe(Respond.json(202)))
      .handle("jobs", ({ query }) => wire(jobs.list(query)).pipe(Respond.ok))
      .handle("job", ({ params }) => wire(jobs.get(params.id)).pipe(Respond.ok))
      .handle("export", ({ query }) =>
        wire(jobs.exportLeads(query)).pipe(
          Effect.map((pages) => {
            const csv = query.format !== "ndjson"
            const text = csv
              ? Stream.concat(Stream.make(LeadFiles.csvHeader()), Stream.map(pages, LeadFiles.csvRows))
              : Stream.map(pages, LeadFiles.ndjsonRows)
            return HttpServerResponse.stream(Stream.encodeText(text), {
              contentType: csv ? `${LeadFiles.CSV}; charset=utf-8` : LeadFiles.NDJSON,
              headers: { "content-disposition": `attachment; filename="leads.${csv ? "csv" : "ndjson"}"` }
            })
          })
        )
      )
  })
)

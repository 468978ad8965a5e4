import { parse } from "csv-parse/sync"
import { invalidField } from "@leadline/core/Errors"
import { jsonProblem } from "@leadline/core/Text"
import type { Lead } from "@leadline/core/leads/Lead"
import { TAG_SEPARATOR } from "@leadline/core/leads/LeadImport"
import type { ImportFile } from "@leadline/core/leads/LeadJobs"
import type { ImportRow } from "@leadline/core/leads/LeadJob"
import { Effect } from "effect"
import { CSV, NDJSON } from "./LeadJobsApi.ts"

/**
 * The files of imports and exports (docs/contract.md, "Imports, exports and bulk changes"): CSV read by
 * the csv project's parser and written by `csvRows` below (RFC 4180: quotes, commas and line breaks in
 * cells), NDJSON one JSON object a line. A file that cannot be read at all is a 400 on `body`; a row that
 * cannot be read is that row's error, and the rest go on.
 */

export { CSV, NDJSON }

/** The media type of a Content-Type header, lower case, without its parameters. */
export const mediaType = (contentType: string | undefined): string =>
  (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase()

export const formatOf = (contentType: string | undefined): "csv" | "ndjson" | undefined => {
  const type = mediaType(contentType)
  return type === CSV ? "csv" : type === NDJSON ? "ndjson" : undefined
}

/** The import's body: a file of up to 64 MiB (100,000 rows of about 650 bytes), not JSON. */
export const IMPORT_UPLOAD = {
  path: "/api/v1/leads/imports",
  types: [CSV, NDJSON],
  maxBytes: 64 * 1024 * 1024
} as const

const unreadable = (message: string) => invalidField("body", message)

/** Rows of a CSV file with a header row: row 1 is the header, as a spreadsheet numbers rows. */
const readCsv = (text: string) =>
  Effect.gen(function* () {
    let records: Array<Array<string>>
    try {
      records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true })
    } catch (error) {
      return yield* unreadable(`not a CSV file: ${(error as Error).message}`)
    }
    const header = records[0]
    if (header === undefined) return yield* unreadable("the file is empty")
    const names = header.map((name) => name.trim())
    const repeated = names.find((name, i) => names.indexOf(name) !== i)
    if (repeated !== undefined) return yield* unreadable(`the header names the column "${repeated}" twice`)
    const rows: Array<ImportRow> = []
    for (let i = 1; i < records.length; i++) {
      const cells = records[i]!
      const row = i + 1
      if (cells.length !== names.length) {
        rows.push({ row, values: {}, problem: `the row has ${cells.length} cells, the header ${names.length}` })
        continue
      }
      const values: Record<string, string> = {}
      for (let c = 0; c < names.length; c++) values[names[c]!] = cells[c]!
      rows.push({ row, values })
    }
    return { format: "csv", header: names, rows } satisfies ImportFile
  })

/** Rows of an NDJSON file: each non-empty line a JSON object, numbered by its line. */
const readNdjson = (text: string): ImportFile => {
  const rows: Array<ImportRow> = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    if (line === "") continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      rows.push({ row: i + 1, values: {}, problem: "the line is not JSON" })
      continue
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      rows.push({ row: i + 1, values: {}, problem: "the line is not a JSON object" })
      continue
    }
    rows.push({ row: i + 1, values: value as Record<string, unknown> })
  }
  return { format: "ndjson", rows }
}

/**
 * A row as a store can keep it: one that holds, in any column, what none keeps (NUL, a lone surrogate,
 * JSON nested past 32 levels: core's `Text.ts`) is that row's error, as a create refuses the same in its
 * field. Stored with its job as it came, it failed PostgreSQL's jsonb: a 500 before any row was checked.
 */
const storable = (row: ImportRow): ImportRow => {
  if (row.problem !== undefined) return row
  for (const [column, value] of Object.entries(row.values)) {
    const named = jsonProblem(column)
    const problem = named === undefined ? jsonProblem(value) : `a column's name ${named}`
    if (problem === undefined) continue
    const reason = named !== undefined ? problem : column.length <= 64 ? `"${column}" ${problem}` : `a value ${problem}`
    return { row: row.row, values: {}, problem: reason }
  }
  return row
}

export const read = (format: "csv" | "ndjson", text: string) =>
  Effect.map(format === "csv" ? readCsv(text) : Effect.succeed(readNdjson(text)), (file) => ({
    ...file,
    rows: file.rows.map(storable)
  }))

/** The columns of an exported CSV: the lead's fields, named as an import reads them. */
export const EXPORT_COLUMNS = [
  "id",
  "name",
  "phone",
  "email",
  "tags",
  "status",
  "assigned_user_id",
  "attributes",
  "marketing_opt_out",
  "created_at",
  "updated_at"
] as const

const cellsOf = (lead: Lead): ReadonlyArray<string> => [
  lead.id,
  lead.name,
  lead.phone,
  lead.email ?? "",
  lead.tags.join(TAG_SEPARATOR),
  lead.status,
  lead.assigned_user_id ?? "",
  JSON.stringify(lead.attributes),
  lead.marketing_opt_out === null ? "" : JSON.stringify(lead.marketing_opt_out),
  lead.created_at,
  lead.updated_at
]

/** Cells that RFC 4180 puts in quotes: those holding a quote, a comma or a line break. */
const NEEDS_QUOTES = /[",\r\n]/

/** A cell as RFC 4180 writes it: in quotes, each of its quotes doubled, when it must be; as it is otherwise. */
const cellText = (value: string): string => (NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value)

/** One record: its cells, a comma between them, and a line feed after (csv-stringify's defaults). */
const recordText = (cells: ReadonlyArray<string>): string => `${cells.map(cellText).join(",")}\n`

export const csvHeader = (): string => recordText(EXPORT_COLUMNS)

/**
 * The export's rows, written here rather than by csv-stringify (imports are still read by csv-parse).
 * csv-stringify makes about ten objects a cell (a cast context, result pairs, separator arrays) and
 * builds each record as a rope: 11 KB of garbage a lead for a 230-byte row, ten times NDJSON's. At
 * the rate an export runs, V8 answered it by growing its young generation to its largest, and a
 * million-lead export left the server 125-130 MB larger (bench/LEADS.md). This writes about 2 KB a
 * lead. The rule is RFC 4180's with csv-stringify's defaults; a test holds the two to the same bytes.
 */
export const csvRows = (leads: ReadonlyArray<Lead>): string => {
  let out = ""
  for (const lead of leads) out += recordText(cellsOf(lead))
  return out
}

export const ndjsonRows = (leads: ReadonlyArray<Lead>): string => {
  let out = ""
  for (const lead of leads) out += `${JSON.stringify(lead)}\n`
  return out
}

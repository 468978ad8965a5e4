import { Schema } from "effect"
import { issueDetails } from "../Errors.ts"
import * as NewLead from "./Lead.ts"
import { CreateLead, type Lead } from "./Lead.ts"
import { IMPORT_FIELDS, type ImportRow, type ImportSpec, type LeadJobCounts, type RowError } from "./LeadJob.ts"

/**
 * The rules of an import (docs/contract.md, "Imports, exports and bulk changes"): which column feeds which
 * field, how a CSV cell becomes a value, and what a chunk of rows does to the leads. A row is checked by
 * `CreateLead`, the schema of a single create, and applied as if the rows were sent one by one, in order.
 */

/** The separator of several tags in one CSV cell (HubSpot's, for multiple values): `vip;hot`. */
export const TAG_SEPARATOR = ";"

/** The column each mapped field is read from: the mapping's, else the field's own name (not for `attributes.<key>`). */
export const columnsOf = (mapping: Readonly<Record<string, string>>): ReadonlyArray<readonly [string, string]> => [
  ...IMPORT_FIELDS.map((field) => [field, mapping[field] ?? field] as const),
  ...Object.entries(mapping).filter(([field]) => field.startsWith("attributes."))
]

/** A mapped column a CSV file lacks: the field that names it, for the 400. Name and phone must be there. */
export const missingColumn = (
  mapping: Readonly<Record<string, string>>,
  header: ReadonlyArray<string>
): { readonly field: string; readonly column: string } | undefined => {
  for (const [field, column] of columnsOf(mapping)) {
    const required = field === "name" || field === "phone" || mapping[field] !== undefined
    if (required && !header.includes(column)) return { field, column }
  }
  return undefined
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** A CSV cell as the field's value: empty is left out, tags are split, attributes are JSON. */
const fromCell = (field: string, cell: unknown): unknown => {
  if (typeof cell !== "string" || cell === "") return undefined
  if (field === "tags") {
    return cell
      .split(TAG_SEPARATOR)
      .map((tag) => tag.trim())
      .filter((tag) => tag !== "")
  }
  if (field === "attributes") return parseJson(cell)
  return cell
}

/** What a row gives `CreateLead`: each mapped field's value, `attributes.<key>` columns merged into `attributes`. */
export const inputOf = (row: ImportRow, spec: ImportSpec): Record<string, unknown> => {
  const input: Record<string, unknown> = {}
  const attributes: Record<string, unknown> = {}
  let hasAttribute = false
  for (const [field, column] of columnsOf(spec.mapping)) {
    const raw = row.values[column]
    const value = spec.format === "csv" ? fromCell(field, raw) : raw
    if (value === undefined) continue
    if (field.startsWith("attributes.")) {
      attributes[field.slice("attributes.".length)] = value
      hasAttribute = true
    } else {
      input[field] = value
    }
  }
  if (hasAttribute) {
    const given = input.attributes
    input.attributes =
      typeof given === "object" && given !== null && !Array.isArray(given) ? { ...given, ...attributes } : attributes
  }
  return input
}

const decodeCreate = Schema.decodeUnknownResult(CreateLead)

export type Checked = { readonly row: number; readonly input: CreateLead } | { readonly error: RowError }

export const rowError = (row: number, field: string | null, reason: string): RowError => ({
  row,
  lead_id: null,
  field,
  reason
})

/** The row checked as a single create is; a refused row names its first failing field. */
export const check = (row: ImportRow, spec: ImportSpec): Checked => {
  if (row.problem !== undefined) return { error: rowError(row.row, null, row.problem) }
  const decoded = decodeCreate(inputOf(row, spec))
  if (decoded._tag === "Success") return { row: row.row, input: decoded.success }
  const first = issueDetails(decoded.failure)[0]
  const field = first === undefined || first.path === "" ? null : first.path.split(".")[0]!
  return { error: rowError(row.row, field, first?.message ?? "invalid row") }
}

/** The fields of a lead an import compares to tell an update from a row that changes nothing. */
const same = (a: Lead, b: Lead) =>
  a.name === b.name &&
  a.email === b.email &&
  a.status === b.status &&
  a.assigned_user_id === b.assigned_user_id &&
  JSON.stringify(a.tags) === JSON.stringify(b.tags) &&
  JSON.stringify(a.attributes) === JSON.stringify(b.attributes) &&
  (a.marketing_opt_out === null) === (b.marketing_opt_out === null)

/** What a chunk does: the leads to insert and to update, its counts and its refused rows. */
export interface ChunkPlan {
  readonly inserts: ReadonlyArray<Lead>
  /** The row that made each inserted lead, by its id. */
  readonly madeBy: ReadonlyMap<string, number>
  readonly updates: ReadonlyArray<Lead>
  readonly counts: LeadJobCounts
  readonly errors: ReadonlyArray<RowError>
}

/**
 * Applies checked rows in order: a new phone makes a lead, a phone that has one (stored, or made by an
 * earlier row of the chunk) updates it with the row's fields (`on_conflict=update`) or is skipped. A row
 * naming a user not of the account is refused on `assigned_user_id`.
 */
export const plan = (
  rows: ReadonlyArray<Checked>,
  spec: ImportSpec,
  existing: ReadonlyMap<string, Lead>,
  isUser: (id: string) => boolean,
  newId: () => string,
  now: string
): ChunkPlan => {
  const created = new Map<string, Lead>()
  const madeBy = new Map<string, number>()
  const updated = new Map<string, Lead>()
  const errors: Array<RowError> = []
  const counts = { read: rows.length, created: 0, updated: 0, unchanged: 0, failed: 0 }
  for (const checked of rows) {
    if ("error" in checked) {
      errors.push(checked.error)
      counts.failed++
      continue
    }
    const { input, row } = checked
    if (input.assigned_user_id != null && !isUser(input.assigned_user_id)) {
      errors.push(rowError(row, "assigned_user_id", "no such user in this account"))
      counts.failed++
      continue
    }
    const current = created.get(input.phone) ?? updated.get(input.phone) ?? existing.get(input.phone)
    if (current === undefined) {
      const lead = NewLead.fromInput(newId(), input, now)
      created.set(input.phone, lead)
      madeBy.set(lead.id, row)
      counts.created++
      continue
    }
    if (spec.onConflict === "skip") {
      counts.unchanged++
      continue
    }
    const { phone: _phone, ...fields } = input
    // A lead already opted out keeps its first opt-out, as a keyword's does.
    const next = NewLead.withChanges(current, fields, now, true)
    if (same(current, next)) {
      counts.unchanged++
      continue
    }
    if (created.has(input.phone)) created.set(input.phone, next)
    else updated.set(input.phone, next)
    counts.updated++
  }
  return { inserts: [...created.values()], madeBy, updates: [...updated.values()], counts, errors }
}

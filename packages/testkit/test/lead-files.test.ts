import { parse } from "csv-parse/sync"
import { stringify } from "csv-stringify/sync"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Lead } from "@leadline/core/leads/Lead"
import * as LeadFiles from "@leadline/http-adapter/leads/LeadFiles"

/**
 * The export's own CSV writer (LeadFiles.ts says why it is not csv-stringify) against csv-stringify
 * with its defaults, character for character, and against csv-parse, which reads imports: RFC 4180's quoting of
 * quotes, commas and line breaks, and everything else as it is.
 */

// A BOM is data here: TextDecoder would drop one at the start of a cell's bytes.
const decode = (bytes: Uint8Array) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes)
/** The bytes sent for a text, as the export's `Stream.encodeText` encodes it (a lone surrogate as U+FFFD). */
const encode = (text: string) => new TextEncoder().encode(text)

/** The cells of a lead as docs/contract.md lists them for the export. */
const cellsOf = (lead: Lead): Array<string> => [
  lead.id,
  lead.name,
  lead.phone,
  lead.email ?? "",
  lead.tags.join(";"),
  lead.status,
  lead.assigned_user_id ?? "",
  JSON.stringify(lead.attributes),
  lead.marketing_opt_out === null ? "" : JSON.stringify(lead.marketing_opt_out),
  lead.created_at,
  lead.updated_at
]

const lead = (fields: Partial<Lead>): Lead => ({
  id: "ld_01",
  name: "Ada",
  phone: "+14155550100",
  email: null,
  tags: [],
  status: "new",
  assigned_user_id: null,
  attributes: {},
  marketing_opt_out: null,
  created_at: "2026-01-02T03:04:05.006Z",
  updated_at: "2026-01-02T03:04:05.006Z",
  ...fields
})

/** Text that CSV must take care of: quotes, commas, both line breaks, a BOM, and any UTF-16 unit (lone surrogates too). */
const hostileText = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('"', ",", "\n", "\r", "\r\n", "\uFEFF", ";", " ", "=", "+") },
    { weight: 5, arbitrary: fc.constantFrom("a", "Z", "0", "ç", "ã", "ü", "日", "😀") },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)) }
  ),
  maxLength: 40
})

const leadArbitrary = fc.record({
  name: hostileText,
  phone: hostileText,
  email: fc.option(hostileText, { nil: null }),
  tags: fc.array(hostileText, { maxLength: 3 }),
  status: fc.constantFrom("new", "contacted", "qualified", "won", "lost" as const),
  assigned_user_id: fc.option(hostileText, { nil: null }),
  attributes: fc.dictionary(hostileText, fc.oneof(hostileText, fc.integer(), fc.boolean()), { maxKeys: 3 }),
  marketing_opt_out: fc.option(
    fc.record({ at: hostileText, source: fc.constant("api" as const), reason: fc.option(hostileText, { nil: null }) }),
    { nil: null }
  )
})

describe("the export's files", () => {
  it("writes the header csv-stringify writes", () => {
    expect(LeadFiles.csvHeader()).toBe(
      "id,name,phone,email,tags,status,assigned_user_id,attributes,marketing_opt_out,created_at,updated_at\n"
    )
    expect(LeadFiles.csvHeader()).toBe(stringify([[...LeadFiles.EXPORT_COLUMNS]]))
  })

  it("quotes a cell that holds a quote, a comma or a line break, doubling its quotes, and no other", () => {
    const leads = [
      lead({ name: 'Ada "the first",\nLovelace', attributes: { note: 'say "hi"' }, tags: ["a", "b"] }),
      lead({ name: "=SUM(A1)", phone: "+1 415", email: "", assigned_user_id: "carriage\rreturn" }),
      lead({ name: "\uFEFFbom", email: "ada@example.com", tags: ["x,y"] })
    ]
    expect(LeadFiles.csvRows(leads)).toBe(
      [
        'ld_01,"Ada ""the first"",\nLovelace",+14155550100,,a;b,new,,"{""note"":""say \\""hi\\""""}",,2026-01-02T03:04:05.006Z,2026-01-02T03:04:05.006Z\n',
        'ld_01,=SUM(A1),+1 415,,,new,"carriage\rreturn",{},,2026-01-02T03:04:05.006Z,2026-01-02T03:04:05.006Z\n',
        'ld_01,\uFEFFbom,+14155550100,ada@example.com,"x,y",new,,{},,2026-01-02T03:04:05.006Z,2026-01-02T03:04:05.006Z\n'
      ].join("")
    )
    expect(LeadFiles.csvRows([])).toBe("")
  })

  it("writes any leads as csv-stringify does, and csv-parse reads their cells back", () => {
    fc.assert(
      fc.property(fc.array(leadArbitrary, { maxLength: 5 }), (fields) => {
        const leads = fields.map((f, i) => lead({ ...f, id: `ld_${i}` }))
        const written = LeadFiles.csvRows(leads)
        expect(written).toBe(stringify(leads.map(cellsOf)))
        // As sent: a lone surrogate goes as U+FFFD.
        const text = decode(encode(written))
        // What was written, once encoded; csv-parse keeps a BOM inside a cell (its `bom` option is for the file's first).
        const expected = leads.map((l) => cellsOf(l).map((cell) => decode(encode(cell))))
        expect(parse(text, { relax_column_count: false })).toEqual(expected)
      }),
      { numRuns: 300 }
    )
  })

  it("writes NDJSON as one JSON object a line", () => {
    fc.assert(
      fc.property(fc.array(leadArbitrary, { maxLength: 5 }), (fields) => {
        const leads = fields.map((f, i) => lead({ ...f, id: `ld_${i}` }))
        const text = LeadFiles.ndjsonRows(leads)
        expect(text).toBe(leads.map((l) => `${JSON.stringify(l)}\n`).join(""))
      }),
      { numRuns: 100 }
    )
  })

  it("quotes long cells and cells of many quotes whole", () => {
    const long = "x".repeat(3000)
    const leads = [
      lead({ name: long, attributes: { quote: `"${long}"` } }),
      lead({ name: '""""', email: "ã".repeat(2000) })
    ]
    expect(LeadFiles.csvRows(leads)).toBe(stringify(leads.map(cellsOf)))
  })
})

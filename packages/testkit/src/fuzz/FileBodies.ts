import * as fc from "fast-check"
import { isObject } from "../internal/json.ts"
import { controlChar, loneSurrogate } from "./HostileParts.ts"

/**
 * Files for an operation whose body is a file (an import's CSV or NDJSON), valid and hostile. A
 * valid file has a header (CSV) and rows made of the records the test gives (the create schema's
 * bodies: an import checks each row as a create), some of them broken; a hostile one is cut short,
 * ragged, quoted wrong, huge, in another encoding or not the type it says. They are kept as
 * descriptions and built only when sent, so a counterexample stays readable.
 */

export const CSV = "text/csv"
export const NDJSON = "application/x-ndjson"

type LineBreak = "\n" | "\r\n" | "\r"

export interface CsvFile {
  readonly format: "csv"
  readonly header: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
  /** How many times the rows are written one after another: past a chunk of 1,000 rows without listing them. */
  readonly copies: number
  readonly lineBreak: LineBreak
  readonly bom: boolean
  /** Every cell in quotes, not only those that need them. */
  readonly quoteAll: boolean
  /** The last row ends with a line break. */
  readonly trailing: boolean
  /** Text put as it is in place of one cell, quotes and breaks unescaped: `[row, column, text]`. */
  readonly raw: readonly [number, number, string] | undefined
}

/** A line: its text (JSON of a record, or anything else), or a record whose attributes nest `deep` levels. */
export type NdjsonLine = string | { readonly deep: number }

export interface NdjsonFile {
  readonly format: "ndjson"
  readonly lines: ReadonlyArray<NdjsonLine>
  readonly copies: number
  readonly lineBreak: LineBreak
  readonly bom: boolean
}

export type FileContent =
  | CsvFile
  | NdjsonFile
  /** Text sent as it is. */
  | { readonly format: "text"; readonly text: string }
  /** A file whose one cell (CSV) or value (NDJSON) is `size` characters long. */
  | { readonly format: "huge"; readonly of: "csv" | "ndjson"; readonly size: number }

export interface FileBody {
  /** The `Content-Type` it goes with when the case's content type is `auto`: mostly its own, sometimes the other. */
  readonly type: string
  readonly content: FileContent
  /** How its text becomes bytes: UTF-8, or what a spreadsheet saved it as, or UTF-8 with invalid bytes in it. */
  readonly encoding: "utf-8" | "utf-16le" | "latin1" | "invalid-utf-8"
}

export interface FileOptions {
  /** The media types the operation takes (`text/csv`, `application/x-ndjson`). */
  readonly types: ReadonlyArray<string>
  /** Records a row may hold (valid ones, as far as the test can tell). */
  readonly records: fc.Arbitrary<unknown>
}

/** A cell for a value, as an import reads it back: tags joined with `;`, objects as JSON, null empty. */
const cellOf = (value: unknown): string => {
  if (value === undefined || value === null) return ""
  if (typeof value === "string") return value
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value.join(";")
  return JSON.stringify(value) ?? ""
}

/** Cell text that a writer or a reader of CSV must take care with. */
const hostileCell: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '"',
    '""',
    'say "hi"',
    "a,b",
    "two\nlines",
    "two\r\nlines",
    "\r",
    "\uFEFF",
    "\uFEFFname",
    "\u0000",
    " padded ",
    ";",
    ";;a;;",
    "=1+1",
    "+14155550000",
    "null",
    "[]",
    "{",
    '{"__proto__":{"polluted":true}}',
    "\\"
  ),
  fc.string({ unit: fc.oneof(controlChar, loneSurrogate, fc.constantFrom('"', ",", "\n", "\r")), maxLength: 6 }),
  fc.string({ maxLength: 20 })
)

/** Text put where a cell goes as it is: quotes that open and never close, a quote inside a cell, a stray delimiter. */
const RAW_CELLS = ['"unterminated', 'a"b', '"a"b', '"a""', 'x"', '"', '"a"\n"', "a;b;c", "a\tb", "\\,"]

const lineBreak = fc.constantFrom<LineBreak>("\n", "\n", "\r\n", "\r")

const recordOf = (value: unknown): Record<string, unknown> => (isObject(value) ? value : { value })

/** A CSV of records: its header the fields they hold (name and phone first), a cell a field; some cells hostile. */
const csvFile = (options: FileOptions): fc.Arbitrary<CsvFile> =>
  fc
    .record({
      records: fc.array(options.records, { maxLength: 6 }),
      extraColumns: fc.subarray(["notes", "", "name", "Phone Number"], { maxLength: 2 }),
      hostile: fc.array(fc.tuple(fc.nat(), fc.nat(), hostileCell), { maxLength: 3 }),
      ragged: fc.array(fc.tuple(fc.nat(), fc.integer({ min: -2, max: 2 })), { maxLength: 2 }),
      copies: fc.oneof({ weight: 12, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constantFrom(170, 400) }),
      lineBreak,
      bom: fc.boolean(),
      quoteAll: fc.boolean(),
      trailing: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      raw: fc.option(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...RAW_CELLS)), { nil: undefined, freq: 6 })
    })
    .map(({ records, extraColumns, hostile, ragged, copies, ...rest }): CsvFile => {
      const rows = records.map(recordOf)
      const header = [...new Set(["name", "phone", ...rows.flatMap((row) => Object.keys(row))])]
      // A repeated or empty column name: the header the file's reader must refuse or take.
      header.push(...extraColumns)
      const cells = rows.map((row) => header.map((column) => cellOf(row[column])))
      for (const [row, column, text] of hostile) {
        if (cells.length > 0) cells[row % cells.length]![column % header.length] = text
      }
      for (const [row, change] of ragged) {
        if (cells.length === 0) continue
        const target = cells[row % cells.length]!
        if (change < 0) target.splice(change)
        else for (let n = 0; n < change; n++) target.push("extra")
      }
      return { format: "csv", header, rows: cells, copies, ...rest }
    })

/** Lines an NDJSON reader must take in its stride: blank, not JSON, JSON but not an object, deep, repeated keys. */
const strangeLine: fc.Arbitrary<NdjsonLine> = fc.oneof(
  fc.constantFrom(
    "",
    "   ",
    "not json",
    "{",
    "[]",
    "null",
    "42",
    '"a string"',
    '{"name":"Ada","phone":"+14155550100",}',
    '{"name":"Ada","name":"Grace","phone":"+14155550100"}',
    '{"__proto__":{"polluted":true},"name":"Ada","phone":"+14155550100"}',
    '{"name":"\\ud800","phone":"+14155550100"}',
    '{"name":"a\\u0000b","phone":"+14155550100"}',
    '{"name":"Ada","phone":14155550100}',
    '{"name":"Ada","phone":"+14155550100","attributes":{"n":1e400}}',
    "\uFEFF{}",
    "\u0000"
  ),
  fc.constantFrom(40, 1_000, 100_000).map((deep): NdjsonLine => ({ deep }))
)

const ndjsonFile = (options: FileOptions): fc.Arbitrary<NdjsonFile> =>
  fc.record({
    format: fc.constant("ndjson" as const),
    lines: fc.array(
      fc.oneof(
        { weight: 4, arbitrary: options.records.map((record): NdjsonLine => JSON.stringify(record) ?? "null") },
        { weight: 1, arbitrary: strangeLine }
      ),
      { maxLength: 8 }
    ),
    copies: fc.oneof({ weight: 12, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constantFrom(170, 400) }),
    lineBreak,
    bom: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
  })

/** Whole files that are not what they say, or nothing at all. */
const ODD_FILES = [
  "",
  "\uFEFF",
  "\n\n\n",
  "\r\n",
  "name,phone",
  "name,phone\n",
  "name,name\nAda,+14155550100\n",
  ",\n,\n",
  "phone\n+14155550100\n",
  "name;phone\nAda;+14155550100\n",
  "name\tphone\nAda\t+14155550100\n",
  '"name","phone"\n"Ada","+14155550100',
  'name,phone\n"Ada,+14155550100\n',
  '{"name":"Ada","phone":"+14155550100"}',
  '[{"name":"Ada","phone":"+14155550100"}]',
  '<?xml version="1.0"?><leads/>',
  "\u0000\u0000\u0000"
]

const contentArbitrary = (options: FileOptions): fc.Arbitrary<FileContent> =>
  fc.oneof(
    { weight: 5, arbitrary: csvFile(options) },
    { weight: 4, arbitrary: ndjsonFile(options) },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_FILES).map((text): FileContent => ({ format: "text", text })) },
    {
      weight: 1,
      arbitrary: fc.record({
        format: fc.constant("huge" as const),
        of: fc.constantFrom("csv" as const, "ndjson" as const),
        size: fc.constantFrom(70_000, 1_000_000, 3_000_000)
      })
    }
  )

const encodingArbitrary = fc.oneof(
  { weight: 16, arbitrary: fc.constant("utf-8" as const) },
  { weight: 1, arbitrary: fc.constantFrom("utf-16le" as const, "latin1" as const, "invalid-utf-8" as const) }
)

/** Files for an operation that takes `options.types`: mostly sent as their own type, sometimes as the other. */
export const fileArbitrary = (options: FileOptions): fc.Arbitrary<FileBody> =>
  fc
    .record({ content: contentArbitrary(options), encoding: encodingArbitrary, mislabelled: fc.nat({ max: 9 }) })
    .map(({ content, encoding, mislabelled }): FileBody => {
      const own =
        content.format === "csv" || (content.format === "huge" && content.of === "csv")
          ? CSV
          : content.format === "text"
            ? undefined
            : NDJSON
      // One file in ten goes as another type the operation takes (a CSV sent as NDJSON); odd texts as any.
      const others = options.types.filter((type) => type !== own)
      const type =
        own === undefined || !options.types.includes(own)
          ? options.types[mislabelled % options.types.length]!
          : mislabelled === 0 && others.length > 0
            ? others[0]!
            : own
      return { type, content, encoding }
    })

/** A cell as RFC 4180 writes it, or in quotes whatever it holds. */
const quoted = (cell: string, always: boolean) =>
  always || /[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell

/** The rows written `copies` times, or as many times as keep the file under about 4 MB (a deep or long row is large). */
const repeat = (rows: ReadonlyArray<string>, copies: number): Array<string> => {
  const size = rows.reduce((sum, row) => sum + row.length + 1, 0)
  const times = Math.max(1, Math.min(copies, Math.floor(4_000_000 / Math.max(size, 1))))
  return Array.from({ length: times }, () => rows).flat()
}

const lineText = (line: NdjsonLine): string =>
  typeof line === "string"
    ? line
    : `{"name":"Deep","phone":"+14155550100","attributes":${'{"a":'.repeat(line.deep)}1${"}".repeat(line.deep)}}`

/** The text a file's description stands for (huge ones are several MB). */
export const fileText = (content: FileContent): string => {
  switch (content.format) {
    case "text":
      return content.text
    case "huge": {
      const big = "x".repeat(content.size)
      return content.of === "csv"
        ? `name,phone,notes\n${big},+14155550100,${big}\n`
        : `${JSON.stringify({ name: big, phone: "+14155550100", attributes: { notes: big } })}\n`
    }
    case "ndjson": {
      const text = repeat(content.lines.map(lineText), content.copies).join(content.lineBreak)
      return `${content.bom ? "\uFEFF" : ""}${text}${content.lines.length > 0 ? content.lineBreak : ""}`
    }
    case "csv": {
      const line = (cells: ReadonlyArray<string>) => cells.map((cell) => quoted(cell, content.quoteAll)).join(",")
      const rows = content.rows.map(line)
      if (content.raw !== undefined && content.rows.length > 0) {
        const [row, column, text] = content.raw
        const cells = content.rows[row % content.rows.length]!.map((cell) => quoted(cell, content.quoteAll))
        if (cells.length > 0) cells[column % cells.length] = text
        rows[row % content.rows.length] = cells.join(",")
      }
      const lines = [line(content.header), ...repeat(rows, content.copies)]
      return `${content.bom ? "\uFEFF" : ""}${lines.join(content.lineBreak)}${content.trailing ? content.lineBreak : ""}`
    }
  }
}

/** Bytes that are not UTF-8: a cut sequence, a byte UTF-8 never uses, an encoded surrogate, an overlong slash. */
const INVALID_UTF8 = [0xc3, 0x2c, 0xff, 0x2c, 0xed, 0xa0, 0x80, 0x2c, 0xc0, 0xaf]

/** The bytes sent for a file. */
export const fileBytes = (body: FileBody): Uint8Array => {
  const text = fileText(body.content)
  switch (body.encoding) {
    case "utf-8":
      return new TextEncoder().encode(text)
    case "utf-16le":
      // With its byte-order mark, as spreadsheets save "Unicode text".
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")])
    case "latin1":
      return Buffer.from(text, "latin1")
    case "invalid-utf-8": {
      // After the first line, so the header (or first record) is read and the rows meet the bytes.
      const bytes = new TextEncoder().encode(text)
      const at = bytes.indexOf(0x0a) + 1
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(INVALID_UTF8), bytes.subarray(at)])
    }
  }
}

import * as fc from "fast-check"
import { type Document, deref, type Operation, type Parameter, type Schema } from "./OpenApiDocument.ts"
import type { Segment, QueryEntry, Credential } from "./RequestArbitrary.ts"

/**
 * The hostile half of the fuzzer's requests: ids, injections and malformed URL text for path
 * and query values, odd header values, and the credentials a request is sent with.
 */

const textSegment = (text: string): Segment => ({ kind: "text", text })

const ULID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"

const idLike: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom("ld", "key", "dlv", "evt", "acc", "usr"),
      fc.string({ unit: fc.constantFrom(...ULID_ALPHABET), minLength: 26, maxLength: 26 })
    )
    .map(([prefix, ulid]) => `${prefix}_${ulid}`),
  fc.uuid()
)

const INJECTIONS = [
  "' OR '1'='1",
  "1; DROP TABLE leads; --",
  "' UNION SELECT secret FROM api_keys --",
  "\\'; SELECT pg_sleep(5); --",
  '{"$gt": ""}',
  '{"$ne": null}',
  "$where: '1 == 1'",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, meant literally
  "${7*7}",
  "{{7*7}}",
  "<script>alert(1)</script>",
  "../../etc/passwd",
  "%00",
  "null",
  "undefined",
  "__proto__",
  "constructor",
  "NaN",
  "-1"
]

/** URL text sent unencoded: traversals, encoded slashes, malformed and overlong escapes. */
const RAW_SEGMENTS = [
  "..",
  ".",
  "%2E%2E",
  "..%2F..%2Fadmin",
  "%2F",
  "%2f",
  "a%2Fb",
  "%5C",
  "%00",
  "%",
  "%zz",
  "%E0%A4%A",
  "%C0%AF",
  "%ED%A0%80",
  "%FF%FE",
  "%25",
  "%20",
  "+",
  ";x=1",
  "*"
]

export const controlChar = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)),
  fc.constant("\u007f")
)

const controlChars = fc.string({ unit: controlChar, minLength: 1, maxLength: 8 })

export const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code))

const anyCodePoint = fc
  .integer({ min: 0, max: 0x10ffff })
  .filter((code) => code < 0xd800 || code > 0xdfff)
  .map((code) => String.fromCodePoint(code))

/** Any string, lone surrogates included. */
const unicodeText = fc.string({
  unit: fc.oneof({ weight: 5, arbitrary: anyCodePoint }, { weight: 1, arbitrary: loneSurrogate }),
  minLength: 1,
  maxLength: 30
})

const shortHostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: idLike },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
  { weight: 2, arbitrary: unicodeText },
  { weight: 2, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 1, arbitrary: controlChars }
)

/**
 * Strings to put where an id goes. Long ones only in the path, and under 4,000
 * characters (12 KB encoded): Node refuses a request head over 16 KiB with a
 * bare 431 before the application sees it.
 */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 9, arbitrary: shortHostileText },
  { weight: 1, arbitrary: fc.string({ minLength: 1000, maxLength: 4000 }) }
)

export const known: fc.Arbitrary<Segment> = fc.nat().map((pick): Segment => ({ kind: "known", pick }))

/** Existing ids with `knownWeight` against 5 for hostile text; 0 where the test knows no ids. */
export const segment = (knownWeight: number, text = shortHostileText): fc.Arbitrary<Segment> => {
  const hostile = fc.oneof(
    { weight: 4, arbitrary: text.map((value): Segment => ({ kind: "text", text: value })) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS).map((raw): Segment => ({ kind: "raw", raw })) }
  )
  if (knownWeight === 0) return hostile
  return fc.oneof({ weight: knownWeight, arbitrary: known }, { weight: 5, arbitrary: hostile })
}

/** Numbers as query text: mostly small (in range for paging), else out of range, huge, fractional, oddly spelled. */
const numericText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -2, max: 110 }).map(String) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "0",
      "-0",
      "1.5",
      "1e2",
      "0x10",
      " 5",
      "5 ",
      "+5",
      "NaN",
      "Infinity",
      "-Infinity",
      "99999999999999999999",
      "9007199254740993",
      "1000000000",
      "1000000001",
      "999999999999999",
      "-999999999999999",
      "١٢"
    )
  }
)

/** Existing ids where the test knows some, the declared enum, numbers, and hostile text. */
const queryValue = (document: Document, parameter: Parameter, hasKnown: boolean): fc.Arbitrary<Segment> => {
  const options = enumValues(document, parameter.schema).map((value) => String(value))
  return fc.oneof(
    ...(hasKnown ? [{ weight: 6, arbitrary: known }] : []),
    ...(options.length > 0 ? [{ weight: 3, arbitrary: fc.constantFrom(...options).map(textSegment) }] : []),
    { weight: 3, arbitrary: numericText.map(textSegment) },
    { weight: 2, arbitrary: segment(0) }
  )
}

const enumValues = (document: Document, schema: Schema): Array<unknown> => {
  const s = deref(document, schema)
  if (Array.isArray(s.enum)) return s.enum
  const branches = [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : [])]
  return branches.flatMap((branch) => enumValues(document, branch as Schema))
}

const sometimes = <A>(arbitrary: fc.Arbitrary<A>, weight: number) =>
  fc.oneof({ weight: 8 - weight, arbitrary: fc.constant(undefined) }, { weight, arbitrary })

/** Declared parameters (sometimes left out, sometimes repeated) and unknown extra ones. */
export const queryArbitrary = (
  document: Document,
  operation: Operation,
  hasKnown: (name: string) => boolean
): fc.Arbitrary<Array<QueryEntry>> => {
  const declared = operation.parameters.filter((parameter) => parameter.in === "query")
  const entries = declared.map((parameter) =>
    fc
      .tuple(
        sometimes(queryValue(document, parameter, hasKnown(parameter.name)), parameter.required ? 7 : 4),
        sometimes(queryValue(document, parameter, hasKnown(parameter.name)), 1)
      )
      .map(([value, repeated]) =>
        [value, value === undefined ? undefined : repeated]
          .filter((entry) => entry !== undefined)
          .map((entry): QueryEntry => ({ name: textSegment(parameter.name), value: entry }))
      )
  )
  const extra = fc.array(
    fc.record({
      name: fc
        .oneof(
          fc.string({ minLength: 1, maxLength: 12 }),
          fc.constantFrom("__proto__", "constructor", "limit[]", "a[b]")
        )
        .map(textSegment),
      value: segment(0)
    }),
    { maxLength: 2 }
  )
  return fc.tuple(fc.tuple(...entries), extra).map(([lists, unknown]) => [...lists.flat(), ...unknown])
}

/** What HTTP lets a header value hold: tab, visible ASCII, space and obs-text (0x80 to 0xFF). */
const headerByte = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constant(0x09) },
  { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) }
)

const printableAscii = fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code))

export const idempotencyKey: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.string({ unit: printableAscii, minLength: 1, maxLength: 200 }) },
  // A small pool, so that keys come back: replays, and reuse with another body (422).
  { weight: 3, arbitrary: fc.constantFrom("retry-1", "retry-2", "retry-3") },
  { weight: 1, arbitrary: fc.string({ unit: printableAscii, minLength: 201, maxLength: 400 }) },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "\t") },
  {
    weight: 2,
    arbitrary: fc.array(headerByte, { minLength: 1, maxLength: 250 }).map((codes) => String.fromCharCode(...codes))
  }
)

export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant("auto") },
  { weight: 1, arbitrary: fc.constant(undefined) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "APPLICATION/JSON",
      "application/json;charset=latin1",
      "text/plain",
      "text/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/merge-patch+json",
      "application/problem+json",
      "application/jsonx",
      "",
      "*/*"
    )
  }
)

export const credentialArbitrary = (credentials: ReadonlyArray<Credential>): fc.Arbitrary<Credential> => {
  const [allowed, ...others] = credentials
  if (allowed === undefined) throw new Error("at least one credential is needed")
  return others.length === 0
    ? fc.constant(allowed)
    : fc.oneof({ weight: 6, arbitrary: fc.constant(allowed) }, { weight: 1, arbitrary: fc.constantFrom(...others) })
}

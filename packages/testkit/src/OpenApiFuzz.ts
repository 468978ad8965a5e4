import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import * as fc from "fast-check"

/**
 * Property-based fuzzing driven by a server's OpenAPI document: read the
 * document, enumerate its operations, generate hostile and valid requests for
 * each with fast-check, send them over a raw HTTP connection, and check every
 * answer against the document.
 */

// ---------------------------------------------------------------------------
// The document

/** A JSON schema as the document states it; loosely typed, since it comes off the wire. */
export type Schema = { readonly [keyword: string]: unknown }

export interface Document {
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  readonly components?: { readonly schemas?: Readonly<Record<string, Schema>> }
  readonly security?: ReadonlyArray<unknown>
}

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header" | "cookie"
  readonly required: boolean
  readonly schema: Schema
}

export interface Operation {
  /** `METHOD /path/{template}`, for test names and messages. */
  readonly key: string
  readonly method: string
  readonly path: string
  readonly parameters: ReadonlyArray<Parameter>
  /** The JSON schema of the request body, when the operation takes one. */
  readonly requestBody: Schema | undefined
  /** Declared responses by status (`"200"`, `"4XX"`, `"default"`): the JSON body schema, or undefined for no body. */
  readonly responses: ReadonlyMap<string, Schema | undefined>
  /** Names of the security schemes that may authorise it. */
  readonly security: ReadonlyArray<string>
}

const METHODS = ["get", "put", "post", "patch", "delete", "head", "options", "trace"]

export const readDocument = async (baseUrl: string, path = "/api/openapi.json"): Promise<Document> => {
  const reply = await send(baseUrl, { method: "GET", path, headers: {}, body: undefined, chunked: false })
  if (reply.status !== 200) throw new Error(`GET ${path}: ${reply.status} ${reply.text.slice(0, 200)}`)
  return JSON.parse(reply.text) as Document
}

/** Follows a local JSON pointer (`#/components/schemas/Lead`). */
const pointer = (document: Document, ref: string): unknown => {
  if (!ref.startsWith("#/")) throw new Error(`only local $refs are supported: ${ref}`)
  let node: unknown = document
  for (const raw of ref.slice(2).split("/")) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~")
    node = isObject(node) ? node[segment] : undefined
    if (node === undefined) throw new Error(`unresolved $ref ${ref}`)
  }
  return node
}

/** The schema itself, or what its `$ref` chain points to. Nested refs stay lazy, so recursive schemas are fine. */
export const deref = (document: Document, schema: Schema): Schema => {
  let current = schema
  const seen = new Set<string>()
  while (typeof current.$ref === "string") {
    if (seen.has(current.$ref)) throw new Error(`circular $ref ${current.$ref}`)
    seen.add(current.$ref)
    current = pointer(document, current.$ref) as Schema
  }
  return current
}

const jsonSchemaOf = (document: Document, holder: unknown): Schema | undefined => {
  if (!isObject(holder)) return undefined
  const resolved = deref(document, holder)
  const content = resolved.content
  if (!isObject(content)) return undefined
  const type = Object.keys(content).find((name) => /^application\/([\w.-]+\+)?json\b/.test(name))
  const media = type === undefined ? undefined : content[type]
  return isObject(media) && isObject(media.schema) ? media.schema : undefined
}

const parametersOf = (document: Document, ...lists: ReadonlyArray<unknown>): Array<Parameter> => {
  const byKey = new Map<string, Parameter>()
  for (const list of lists) {
    for (const raw of Array.isArray(list) ? list : []) {
      const parameter = deref(document, raw as Schema) as unknown as Parameter
      // Operation-level parameters override path-level ones of the same name and place.
      byKey.set(`${parameter.in}:${parameter.name}`, {
        name: parameter.name,
        in: parameter.in,
        required: parameter.required === true,
        schema: isObject(parameter.schema) ? parameter.schema : {}
      })
    }
  }
  return [...byKey.values()]
}

/** Every operation of the document, in document order. */
export const operations = (document: Document): Array<Operation> => {
  const found: Array<Operation> = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const raw = item[method]
      if (!isObject(raw)) continue
      const responses = new Map<string, Schema | undefined>()
      for (const [status, response] of Object.entries(isObject(raw.responses) ? raw.responses : {})) {
        responses.set(/^\dxx$/i.test(status) ? status.toUpperCase() : status, jsonSchemaOf(document, response))
      }
      // An operation without its own `security` has the document's.
      const requirements = Array.isArray(raw.security) ? raw.security : (document.security ?? [])
      const security = requirements.flatMap((entry) => (isObject(entry) ? Object.keys(entry) : []))
      found.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters: parametersOf(document, item.parameters, raw.parameters),
        requestBody: jsonSchemaOf(document, raw.requestBody),
        responses,
        security
      })
    }
  }
  return found
}

// ---------------------------------------------------------------------------
// Checking values against schemas

export interface Mismatch {
  /** Where in the response: `status`, `header x-request-id`, or `$.leads[0].id` in the body. */
  readonly path: string
  readonly message: string
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const typeName = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : Number.isInteger(value) ? "integer" : typeof value

const hasType = (value: unknown, type: unknown): boolean => {
  switch (type) {
    case "null":
      return value === null
    case "boolean":
      return typeof value === "boolean"
    case "string":
      return typeof value === "string"
    case "integer":
      return Number.isInteger(value)
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "array":
      return Array.isArray(value)
    case "object":
      return isObject(value)
    default:
      return false
  }
}

const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    return (
      keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
    )
  }
  return false
}

const childPath = (path: string, key: string | number) =>
  typeof key === "number"
    ? `${path}[${key}]`
    : /^[A-Za-z_$][\w$]*$/.test(key)
      ? `${path}.${key}`
      : `${path}[${JSON.stringify(key)}]`

/** Among failing alternatives, the one that got furthest into the value says most about what is wrong. */
const deepest = (mismatches: ReadonlyArray<Mismatch>): Mismatch =>
  mismatches.reduce((best, next) => (next.path.length > best.path.length ? next : best))

/**
 * Checks a value against the subset of JSON Schema that OpenAPI documents use:
 * `$ref`, `type` (also a list, `"null"` included), `nullable`, `enum`, `const`,
 * `anyOf`, `oneOf`, `allOf`, `properties`, `required`, `additionalProperties`,
 * `items`, and the length and range bounds. Returns the first mismatch.
 */
export const checkValue = (document: Document, schema: Schema, value: unknown, path = "$"): Mismatch | undefined => {
  const s = deref(document, schema)
  if (s.nullable === true && value === null) return undefined
  const fail = (message: string): Mismatch => ({ path, message })

  if (Array.isArray(s.allOf)) {
    for (const part of s.allOf) {
      const mismatch = checkValue(document, part as Schema, value, path)
      if (mismatch !== undefined) return mismatch
    }
  }
  if (Array.isArray(s.anyOf)) {
    const failures: Array<Mismatch> = []
    for (const branch of s.anyOf) {
      const mismatch = checkValue(document, branch as Schema, value, path)
      if (mismatch === undefined) {
        failures.length = 0
        break
      }
      failures.push(mismatch)
    }
    if (failures.length > 0) return deepest(failures)
  }
  if (Array.isArray(s.oneOf)) {
    const results = s.oneOf.map((branch) => checkValue(document, branch as Schema, value, path))
    const matches = results.filter((result) => result === undefined).length
    if (matches === 0) return deepest(results as Array<Mismatch>)
    if (matches > 1) return fail(`matches ${matches} oneOf branches, expected exactly one`)
  }
  if ("const" in s && !deepEqual(value, s.const)) return fail(`expected ${JSON.stringify(s.const)}`)
  if (Array.isArray(s.enum) && !s.enum.some((option) => deepEqual(value, option))) {
    return fail(`expected one of ${JSON.stringify(s.enum)}, got ${JSON.stringify(value)}`)
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type]
    if (!types.some((type) => hasType(value, type)))
      return fail(`expected ${types.join(" or ")}, got ${typeName(value)}`)
  }
  if (typeof value === "string") return checkString(s, value, fail)
  if (typeof value === "number") return checkNumber(s, value, fail)
  if (Array.isArray(value)) return checkArray(document, s, value, path, fail)
  if (isObject(value)) return checkObject(document, s, value, path)
  return undefined
}

const checkString = (s: Schema, value: string, fail: (message: string) => Mismatch) => {
  // JSON Schema counts code points, not UTF-16 units.
  const length = [...value].length
  if (typeof s.minLength === "number" && length < s.minLength) return fail(`shorter than ${s.minLength}`)
  if (typeof s.maxLength === "number" && length > s.maxLength) return fail(`longer than ${s.maxLength}`)
  if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value))
    return fail(`does not match ${s.pattern}`)
  return undefined
}

const checkNumber = (s: Schema, value: number, fail: (message: string) => Mismatch) => {
  if (typeof s.minimum === "number" && value < s.minimum) return fail(`below the minimum ${s.minimum}`)
  if (typeof s.maximum === "number" && value > s.maximum) return fail(`above the maximum ${s.maximum}`)
  if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum) return fail("below the exclusive minimum")
  if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum) return fail("above the exclusive maximum")
  return undefined
}

const checkArray = (
  document: Document,
  s: Schema,
  value: ReadonlyArray<unknown>,
  path: string,
  fail: (message: string) => Mismatch
) => {
  if (typeof s.minItems === "number" && value.length < s.minItems) return fail(`fewer than ${s.minItems} items`)
  if (typeof s.maxItems === "number" && value.length > s.maxItems) return fail(`more than ${s.maxItems} items`)
  if (!isObject(s.items)) return undefined
  for (const [index, item] of value.entries()) {
    const mismatch = checkValue(document, s.items, item, childPath(path, index))
    if (mismatch !== undefined) return mismatch
  }
  return undefined
}

const checkObject = (document: Document, s: Schema, value: Record<string, unknown>, path: string) => {
  const properties = isObject(s.properties) ? (s.properties as Record<string, Schema>) : {}
  for (const name of Array.isArray(s.required) ? (s.required as Array<string>) : []) {
    if (!Object.hasOwn(value, name)) return { path: childPath(path, name), message: "required property is missing" }
  }
  for (const [name, item] of Object.entries(value)) {
    const where = childPath(path, name)
    if (Object.hasOwn(properties, name)) {
      const mismatch = checkValue(document, properties[name]!, item, where)
      if (mismatch !== undefined) return mismatch
    } else if (s.additionalProperties === false) {
      return { path: where, message: "property not in the schema" }
    } else if (isObject(s.additionalProperties)) {
      const mismatch = checkValue(document, s.additionalProperties, item, where)
      if (mismatch !== undefined) return mismatch
    }
  }
  return undefined
}

// ---------------------------------------------------------------------------
// Checking replies

export interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly text: string
}

/** The codes the contract pairs with each error status. */
export const ERROR_CODES: ReadonlyMap<number, ReadonlyArray<string>> = new Map([
  [400, ["validation_error"]],
  [401, ["unauthorized"]],
  [403, ["forbidden"]],
  [404, ["not_found"]],
  [409, ["conflict", "idempotency_in_progress"]],
  [413, ["payload_too_large"]],
  [415, ["unsupported_media_type"]],
  [422, ["idempotency_key_reused"]]
])

const NO_ROUTE = JSON.stringify({ error: "No such route", code: "not_found" })

/** `{"error": string, "code": string, "details"?: [{path, message}]}`, nothing else. */
export const GENERIC_ERROR: Schema = {
  type: "object",
  properties: {
    error: { type: "string" },
    code: { type: "string" },
    details: {
      type: "array",
      items: {
        type: "object",
        properties: { path: { type: "string" }, message: { type: "string" } },
        required: ["path", "message"],
        additionalProperties: false
      }
    }
  },
  required: ["error", "code"],
  additionalProperties: false
}

/** The declared response for a status: exact, then its class (`4XX`), then `default`. */
const declaredResponse = (operation: Operation, status: number): { found: boolean; schema: Schema | undefined } => {
  for (const key of [String(status), `${String(status)[0]}XX`, "default"]) {
    if (operation.responses.has(key)) return { found: true, schema: operation.responses.get(key) }
  }
  return { found: false, schema: undefined }
}

/**
 * Checks one reply against the document: no 5xx, an `X-Request-Id`, a status the
 * operation declares (only "no such route" may come undeclared), a JSON body that
 * matches the schema declared for that status, the contract's error code for
 * the status, and `WWW-Authenticate` on a 401.
 */
export const checkReply = (document: Document, operation: Operation, reply: Reply): Mismatch | undefined => {
  if (reply.status >= 500)
    return { path: "status", message: `server error ${reply.status}: ${reply.text.slice(0, 300)}` }
  const requestId = reply.headers["x-request-id"]
  if (typeof requestId !== "string" || requestId === "") return { path: "header x-request-id", message: "missing" }
  if (reply.status === 401 && !/^bearer\b/i.test(reply.headers["www-authenticate"] ?? "")) {
    return { path: "header www-authenticate", message: `expected a Bearer challenge on a 401` }
  }
  const declared = declaredResponse(operation, reply.status)
  const errorCodes = ERROR_CODES.get(reply.status)
  // The one answer a route need not declare: a path mangled past recognition is no route at all.
  const noRoute = reply.status === 404 && reply.text === NO_ROUTE
  if (!declared.found && !noRoute) {
    return { path: "status", message: `${reply.status} is not declared for ${operation.key}` }
  }
  const schema = declared.found ? declared.schema : GENERIC_ERROR
  if (schema === undefined) {
    return reply.text === "" ? undefined : { path: "$", message: "expected no body" }
  }
  if (!/^application\/json\b/i.test(reply.headers["content-type"] ?? "")) {
    return { path: "header content-type", message: `expected application/json, got ${reply.headers["content-type"]}` }
  }
  let body: unknown
  try {
    body = JSON.parse(reply.text)
  } catch {
    return { path: "$", message: `not JSON: ${reply.text.slice(0, 200)}` }
  }
  const mismatch = checkValue(document, schema, body)
  if (mismatch !== undefined) return mismatch
  if (errorCodes !== undefined && isObject(body) && !errorCodes.includes(body.code as string)) {
    return { path: "$.code", message: `expected ${errorCodes.join(" or ")} for a ${reply.status}, got ${body.code}` }
  }
  return undefined
}

// ---------------------------------------------------------------------------
// Generating requests

/**
 * A path or query value: an id that exists at the time of the request (picked
 * then, from what the test knows), text to percent-encode, or raw URL text sent
 * as is (traversals, malformed escapes).
 */
export type Segment =
  | { readonly kind: "known"; readonly pick: number }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "raw"; readonly raw: string }

export interface QueryEntry {
  readonly name: Segment
  readonly value: Segment
}

/**
 * A request body. Large and deep ones are kept as descriptions and built only
 * when sent, so a counterexample stays readable.
 */
export type Body =
  | { readonly kind: "none" }
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "bytes"; readonly bytes: ReadonlyArray<number> }
  | {
      readonly kind: "deep"
      readonly shape: "array" | "object"
      readonly depth: number
      readonly base: unknown
      readonly field: string | undefined
    }
  | { readonly kind: "huge"; readonly size: number; readonly base: unknown; readonly field: string | undefined }

export interface Credential {
  /** For the counterexample: `owner`, `reader`, `none`... */
  readonly label: string
  /** The whole `Authorization` header, or undefined to send none. */
  readonly authorization: string | undefined
}

export interface FuzzCase {
  readonly params: Readonly<Record<string, Segment>>
  readonly query: ReadonlyArray<QueryEntry>
  readonly credential: Credential
  readonly idempotencyKey: string | undefined
  /** `auto`: `application/json` when a body is sent; undefined: no header. */
  readonly contentType: string | undefined
  readonly chunked: boolean
  readonly body: Body
}

export interface ArbitraryOptions {
  /** Weighted towards the first, the one that should be allowed; the others probe 401 and 403. */
  readonly credentials: ReadonlyArray<Credential>
  /** Generators for property names anywhere in a body (`phone`, `url`...), to reach past validation. */
  readonly hints?: Readonly<Record<string, fc.Arbitrary<unknown>>> | undefined
  /** Parameters with ids known when the arbitrary is made get existing ids often; the others never. */
  readonly knownIds?: KnownIds | undefined
}

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

const controlChar = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)),
  fc.constant("\u007f")
)

const controlChars = fc.string({ unit: controlChar, minLength: 1, maxLength: 8 })

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code))

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
const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 9, arbitrary: shortHostileText },
  { weight: 1, arbitrary: fc.string({ minLength: 1000, maxLength: 4000 }) }
)

const known: fc.Arbitrary<Segment> = fc.nat().map((pick): Segment => ({ kind: "known", pick }))

/** Existing ids with `knownWeight` against 5 for hostile text; 0 where the test knows no ids. */
const segment = (knownWeight: number, text = shortHostileText): fc.Arbitrary<Segment> => {
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
const queryArbitrary = (
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

const idempotencyKey: fc.Arbitrary<string | undefined> = fc.oneof(
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

const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
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

const credentialArbitrary = (credentials: ReadonlyArray<Credential>): fc.Arbitrary<Credential> => {
  const [allowed, ...others] = credentials
  if (allowed === undefined) throw new Error("at least one credential is needed")
  return others.length === 0
    ? fc.constant(allowed)
    : fc.oneof({ weight: 6, arbitrary: fc.constant(allowed) }, { weight: 1, arbitrary: fc.constantFrom(...others) })
}

/** Values that are valid for a schema, as far as the schema can tell; hints fill in what it cannot. */
export const valueArbitrary = (
  document: Document,
  schema: Schema,
  hints: Readonly<Record<string, fc.Arbitrary<unknown>>> = {},
  depth = 0
): fc.Arbitrary<unknown> => {
  const s = deref(document, schema)
  const alternatives = [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : [])]
  if (alternatives.length > 0) {
    return fc.oneof(...alternatives.map((branch) => valueArbitrary(document, branch as Schema, hints, depth)))
  }
  if ("const" in s) return fc.constant(s.const)
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum)
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type]
  const base =
    types.length === 0
      ? fc.jsonValue({ maxDepth: 2 })
      : fc.oneof(...types.map((type) => valueOfType(document, s, type, hints, depth)))
  return s.nullable === true ? fc.option(base, { nil: null }) : base
}

const valueOfType = (
  document: Document,
  s: Schema,
  type: unknown,
  hints: Readonly<Record<string, fc.Arbitrary<unknown>>>,
  depth: number
): fc.Arbitrary<unknown> => {
  switch (type) {
    case "null":
      return fc.constant(null)
    case "boolean":
      return fc.boolean()
    case "integer": {
      const min = Math.max(typeof s.minimum === "number" ? s.minimum : -1_000_000, Number.MIN_SAFE_INTEGER)
      const max = Math.min(
        typeof s.maximum === "number" ? s.maximum : Math.max(min, 0) + 1_000_000,
        Number.MAX_SAFE_INTEGER
      )
      return fc.integer({ min, max })
    }
    case "number":
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        ...(typeof s.minimum === "number" ? { min: s.minimum } : {}),
        ...(typeof s.maximum === "number" ? { max: s.maximum } : {})
      })
    case "string":
      return stringOf(s)
    case "array": {
      const minLength = typeof s.minItems === "number" ? s.minItems : 0
      const maxLength = Math.max(minLength, Math.min(typeof s.maxItems === "number" ? s.maxItems : 4, 4))
      const items = isObject(s.items)
        ? valueArbitrary(document, s.items, hints, depth + 1)
        : fc.jsonValue({ maxDepth: 1 })
      return fc.array(items, { minLength, maxLength })
    }
    case "object":
      return objectOf(document, s, hints, depth)
    default:
      return fc.constant(null)
  }
}

const bmpChar = fc
  .integer({ min: 0x20, max: 0xfffd })
  .filter((code) => code < 0xd800 || code > 0xdfff)
  .map((code) => String.fromCharCode(code))

/** Still a JSON string, but one that storage may refuse: control characters (U+0000 too) and lone surrogates. */
const oddChar = fc.oneof(bmpChar, controlChar, loneSurrogate)

/**
 * Strings within the schema's bounds. Only code points of one UTF-16 unit, so
 * the bounds hold whether the server counts code points or units.
 */
const stringOf = (s: Schema): fc.Arbitrary<string> => {
  const minLength = typeof s.minLength === "number" ? s.minLength : 0
  const maxLength = Math.max(minLength, Math.min(typeof s.maxLength === "number" ? s.maxLength : 40, 300))
  return fc.oneof(
    { weight: 6, arbitrary: fc.string({ minLength, maxLength }) },
    { weight: 2, arbitrary: fc.string({ unit: bmpChar, minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: oddChar, minLength, maxLength }) }
  )
}

const objectOf = (
  document: Document,
  s: Schema,
  hints: Readonly<Record<string, fc.Arbitrary<unknown>>>,
  depth: number
): fc.Arbitrary<unknown> => {
  const properties = isObject(s.properties) ? (s.properties as Record<string, Schema>) : {}
  const names = Object.keys(properties)
  if (names.length === 0 || depth > 4) {
    return fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
  }
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const name of names) {
    const derived = valueArbitrary(document, properties[name]!, hints, depth + 1)
    const hint = hints[name]
    model[name] =
      hint === undefined ? derived : fc.oneof({ weight: 4, arbitrary: hint }, { weight: 1, arbitrary: derived })
  }
  const requiredKeys = (Array.isArray(s.required) ? (s.required as Array<string>) : []).filter((name) =>
    names.includes(name)
  )
  return fc.record(model, { requiredKeys })
}

type PathStep = string | number

/** Every position inside a JSON value, to the depth where mutations still say something. */
const positions = (value: unknown, prefix: ReadonlyArray<PathStep> = [], depth = 0): Array<Array<PathStep>> => {
  if (depth > 3) return []
  const children: Array<[PathStep, unknown]> = Array.isArray(value)
    ? value.map((item, index): [PathStep, unknown] => [index, item])
    : isObject(value)
      ? Object.entries(value)
      : []
  return children.flatMap(([key, child]) => [[...prefix, key], ...positions(child, [...prefix, key], depth + 1)])
}

/** Sets an own, enumerable key, even `__proto__` (a plain assignment would set the prototype). */
const defineKey = (target: object, key: PathStep, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })

const clone = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)))

type Mutation =
  | { readonly kind: "replace"; readonly at: number; readonly value: unknown }
  | { readonly kind: "drop"; readonly at: number }
  | { readonly kind: "extra"; readonly at: number; readonly key: string; readonly value: unknown }

const applyMutation = (value: unknown, mutation: Mutation): unknown => {
  const copy = clone(value)
  const spots = positions(copy)
  if (mutation.kind === "replace" && spots.length === 0) return mutation.value
  if (mutation.kind === "extra") {
    const containers = [[], ...spots].filter((spot) => isObject(lookup(copy, spot)))
    const target = lookup(copy, containers[mutation.at % containers.length] ?? [])
    if (isObject(target)) defineKey(target, mutation.key, mutation.value)
    return copy
  }
  const spot = spots[mutation.at % Math.max(spots.length, 1)]
  if (spot === undefined) return copy
  const parent = lookup(copy, spot.slice(0, -1)) as Record<PathStep, unknown> | Array<unknown>
  const last = spot[spot.length - 1]!
  if (mutation.kind === "replace") defineKey(parent, last, mutation.value)
  else if (Array.isArray(parent)) parent.splice(last as number, 1)
  else delete parent[last]
  return copy
}

const lookup = (value: unknown, spot: ReadonlyArray<PathStep>): unknown =>
  spot.reduce<unknown>((node, step) => (node as Record<PathStep, unknown>)[step], value)

/** A value of another JSON type than most fields expect, or null. */
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 8 }),
  fc.constantFrom([], {}, [null], { "": null }, "", 0, -1, 1e308, true),
  fc.jsonValue({ maxDepth: 2 })
)

const extraKey = fc.oneof(
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "hasOwnProperty",
    "id",
    "account_id",
    "created_at",
    ""
  ),
  fc.string({ maxLength: 12 })
)

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), value: wrongValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("extra" as const), at: fc.nat(), key: extraKey, value: wrongValue })
  }
)

const NOT_JSON = [
  "",
  "not json",
  "{",
  "}",
  "[1,",
  "{'name': 'x'}",
  '{"a":1}}',
  '{"a":1,}',
  "undefined",
  "NaN",
  "\u0000",
  "<xml/>",
  "name=x&phone=y",
  "\ufeff{}",
  "null",
  "[]",
  '"a string"',
  "42",
  "true",
  "1e999",
  "-0"
]

/** Inserts `"key": <raw JSON text>` into the JSON text of an object (or makes one). */
const withRawField = (base: unknown, key: string, rawValue: string): string => {
  const rest = isObject(base) ? JSON.stringify(base).slice(1, -1) : ""
  return `{${rest}${rest === "" ? "" : ","}${JSON.stringify(key)}:${rawValue}}`
}

const nested = (shape: "array" | "object", depth: number) =>
  shape === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth)

interface BodyShape {
  /** Top-level property names of the body schema. */
  readonly fields: ReadonlyArray<string>
  /** Those whose schema takes an object or an array: where deep nesting can get past the first type check. */
  readonly structural: ReadonlyArray<string>
}

/** Raw JSON text for one field of an otherwise valid body. */
const RAW_VALUES = {
  surrogates: ['"\\ud800"', '"\\udc00x"', '"a\\ud83d"', '"\\u0000"', '"a\\u0000b"', '"\\uFFFF"'],
  numbers: ["1e400", "-1e400", "123456789012345678901234567890", "-0", "0.1e-400"],
  prototypes: ['{"polluted":true}', '{"prototype":{"polluted":true}}']
}

/**
 * Bodies a JSON parser or a schema decoder may choke on: not JSON, cut short,
 * duplicate keys, escaped lone surrogates and NULs, out-of-range numbers,
 * `__proto__` keys, invalid UTF-8, nesting to 100,000 levels, strings up to
 * 900 KiB and a body just over 1 MiB.
 */
const adversarial = (valid: fc.Arbitrary<unknown>, shape: BodyShape): fc.Arbitrary<Body> => {
  const field = fc.constantFrom(...(shape.fields.length === 0 ? ["x"] : shape.fields))
  const text = (arbitrary: fc.Arbitrary<string>) => arbitrary.map((value): Body => ({ kind: "text", text: value }))
  const rawField = (raw: fc.Arbitrary<string>, key = field) =>
    text(fc.tuple(valid, key, raw).map(([base, name, value]) => withRawField(base, name, value)))
  const nestedField =
    shape.structural.length === 0
      ? fc.constant(undefined)
      : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...shape.structural) }, fc.constant(undefined))
  return fc.oneof(
    text(fc.oneof(fc.constantFrom(...NOT_JSON), fc.string({ maxLength: 40 }))),
    text(fc.tuple(valid, fc.nat()).map(([value, cut]) => truncate(JSON.stringify(value) ?? "", cut))),
    // The key is already in the valid body, so this repeats it with another value.
    rawField(wrongValue.map((value) => JSON.stringify(value))),
    rawField(fc.constantFrom(...RAW_VALUES.surrogates)),
    rawField(fc.constantFrom(...RAW_VALUES.numbers)),
    rawField(fc.constantFrom(...RAW_VALUES.prototypes), fc.constant("__proto__")),
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("deep" as const),
        shape: fc.constantFrom("array" as const, "object" as const),
        depth: fc.constantFrom(64, 1000, 5000, 10_000, 100_000),
        base: valid,
        field: nestedField
      })
    },
    fc.record({
      kind: fc.constant("huge" as const),
      size: fc.constantFrom(70_000, 300_000, 900 * 1024, 1024 * 1024 + 1),
      base: valid,
      field: fc.option(field, { nil: undefined })
    }),
    // `{"a":"<bytes>"}`: any byte, invalid UTF-8 included, inside a JSON string.
    fc
      .array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 16 })
      .map((bytes): Body => ({ kind: "bytes", bytes: [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, ...bytes, 0x22, 0x7d] }))
  )
}

const takesStructure = (document: Document, schema: Schema): boolean => {
  const s = deref(document, schema)
  const branches = [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : [])]
  if (branches.length > 0) return branches.some((branch) => takesStructure(document, branch as Schema))
  const types = Array.isArray(s.type) ? s.type : [s.type]
  return types.some((type) => type === undefined || type === "object" || type === "array")
}

const bodyShape = (document: Document, schema: Schema): BodyShape => {
  const properties = isObject(schema.properties) ? (schema.properties as Record<string, Schema>) : {}
  const fields = Object.keys(properties)
  return { fields, structural: fields.filter((name) => takesStructure(document, properties[name]!)) }
}

const truncate = (text: string, cut: number) => text.slice(0, text.length <= 1 ? 0 : cut % (text.length - 1))

const bodyArbitrary = (
  document: Document,
  operation: Operation,
  hints: Readonly<Record<string, fc.Arbitrary<unknown>>>
): fc.Arbitrary<Body> => {
  const none = fc.constant<Body>({ kind: "none" })
  if (operation.requestBody === undefined) {
    // A stray body where none is expected must not change the answer's shape either.
    const stray = adversarial(fc.jsonValue({ maxDepth: 1 }), { fields: [], structural: [] })
    return fc.oneof({ weight: 12, arbitrary: none }, { weight: 1, arbitrary: stray })
  }
  const schema = deref(document, operation.requestBody)
  const valid = valueArbitrary(document, schema, hints)
  return fc.oneof(
    { weight: 6, arbitrary: valid.map((value): Body => ({ kind: "json", value })) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(valid, mutation)
        .map(([value, change]): Body => ({ kind: "json", value: applyMutation(value, change) }))
    },
    { weight: 3, arbitrary: adversarial(valid, bodyShape(document, schema)) },
    { weight: 1, arbitrary: none }
  )
}

/** Requests for one operation: every parameter, header and body at once, valid or not. */
export const caseArbitrary = (
  document: Document,
  operation: Operation,
  options: ArbitraryOptions
): fc.Arbitrary<FuzzCase> => {
  const hasKnown = (name: string) => (options.knownIds?.(operation, name).length ?? 0) > 0
  const params: Record<string, fc.Arbitrary<Segment>> = {}
  for (const parameter of operation.parameters.filter((p) => p.in === "path")) {
    params[parameter.name] = segment(hasKnown(parameter.name) ? 6 : 0, hostileText)
  }
  return fc.record({
    params: fc.record(params),
    query: queryArbitrary(document, operation, hasKnown),
    credential: credentialArbitrary(options.credentials),
    // Sent on every operation: where it is not declared it must be ignored.
    idempotencyKey,
    contentType,
    chunked: fc.oneof({ weight: 7, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    body: bodyArbitrary(document, operation, options.hints ?? {})
  })
}

// ---------------------------------------------------------------------------
// Building and sending requests

export interface HttpRequest {
  readonly method: string
  /** Path and query, already encoded. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array | undefined
  readonly chunked: boolean
}

/** Ids that exist when a request is built, by operation and parameter name. */
export type KnownIds = (operation: Operation, parameter: string) => ReadonlyArray<string>

/** Percent-encodes every byte outside the unreserved set; lone surrogates become U+FFFD, as in any UTF-8 encoder. */
const percentEncode = (text: string): string =>
  Array.from(new TextEncoder().encode(text), (byte) => {
    const char = String.fromCharCode(byte)
    return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
  }).join("")

const segmentText = (value: Segment, known: ReadonlyArray<string>): string => {
  switch (value.kind) {
    case "known":
      // Nothing exists yet: an id that looks right and is not there.
      return percentEncode(known.length === 0 ? "ld_00000000000000000000000000" : known[value.pick % known.length]!)
    case "text":
      return percentEncode(value.text)
    case "raw":
      return value.raw
  }
}

const bodyText = (body: Body): string | Uint8Array | undefined => {
  switch (body.kind) {
    case "none":
      return undefined
    case "json":
      return JSON.stringify(body.value) ?? "null"
    case "text":
      return body.text
    case "bytes":
      return Uint8Array.from(body.bytes)
    case "deep":
      return body.field === undefined
        ? nested(body.shape, body.depth)
        : withRawField(body.base, body.field, nested(body.shape, body.depth))
    case "huge":
      return withRawField(body.base, body.field ?? "x", JSON.stringify("a".repeat(body.size)))
  }
}

/** Turns a generated case into the exact request to send, with ids that exist now. */
export const materialize = (operation: Operation, fuzzCase: FuzzCase, knownIds: KnownIds): HttpRequest => {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    segmentText(fuzzCase.params[name] ?? { kind: "text", text: name }, knownIds(operation, name))
  )
  const query = fuzzCase.query
    .map((entry) => {
      const name = segmentText(entry.name, [])
      const known = entry.name.kind === "text" ? knownIds(operation, entry.name.text) : []
      return `${name}=${segmentText(entry.value, known)}`
    })
    .join("&")
  const text = bodyText(fuzzCase.body)
  const body = typeof text === "string" ? new TextEncoder().encode(text) : text
  const headers: Record<string, string> = {}
  if (fuzzCase.credential.authorization !== undefined) headers.authorization = fuzzCase.credential.authorization
  if (fuzzCase.idempotencyKey !== undefined) headers["idempotency-key"] = fuzzCase.idempotencyKey
  const type =
    fuzzCase.contentType === "auto" ? (body === undefined ? undefined : "application/json") : fuzzCase.contentType
  if (type !== undefined) headers["content-type"] = type
  return {
    method: operation.method,
    path: query === "" ? path : `${path}?${query}`,
    headers,
    body,
    chunked: body !== undefined && fuzzCase.chunked
  }
}

/**
 * Sends one request on a connection of its own, with the body framed exactly
 * (`Content-Length`, or chunked when asked), and reads the whole answer. A
 * socket error after the answer arrived (the server closing on a 413) is not a
 * failure; no answer in `timeoutMs` is.
 */
export const send = (baseUrl: string, request: HttpRequest, timeoutMs = 20_000): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const url = new URL(baseUrl)
    const headers: Record<string, string> = { ...request.headers }
    if (request.body !== undefined) {
      if (request.chunked) headers["transfer-encoding"] = "chunked"
      else headers["content-length"] = String(request.body.byteLength)
    }
    let answered = false
    const outgoing = httpRequest(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent: false },
      (incoming) => {
        answered = true
        const chunks: Array<Buffer> = []
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
        incoming.on("error", reject)
        incoming.on("end", () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            text: Buffer.concat(chunks).toString("utf8")
          })
        )
      }
    )
    outgoing.setTimeout(timeoutMs, () =>
      outgoing.destroy(new Error(`no answer to ${request.method} ${request.path.slice(0, 200)} in ${timeoutMs} ms`))
    )
    outgoing.on("error", (error) => {
      if (!answered) reject(error)
    })
    if (request.body !== undefined && request.chunked) {
      const half = Math.floor(request.body.byteLength / 2)
      outgoing.write(request.body.subarray(0, half))
      outgoing.end(request.body.subarray(half))
    } else {
      outgoing.end(request.body)
    }
  })

/** The request for a failure message: method, path, every header and the start of the body. */
export const describeRequest = (request: HttpRequest): string => {
  const bodyLength = request.body?.byteLength ?? 0
  const preview =
    request.body === undefined
      ? ""
      : new TextDecoder().decode(request.body.subarray(0, 300)) + (bodyLength > 300 ? "…" : "")
  const path =
    request.path.length > 300 ? `${request.path.slice(0, 300)}… (${request.path.length} chars)` : request.path
  return [
    `${request.method} ${path}`,
    ...Object.entries(request.headers).map(([name, value]) => `${name}: ${JSON.stringify(value)}`),
    ...(request.body === undefined
      ? []
      : [`body (${bodyLength} bytes${request.chunked ? ", chunked" : ""}): ${preview}`])
  ].join("\n")
}

import * as fc from "fast-check"
import { isObject } from "../internal/json.ts"
import { type FileBody, fileArbitrary, fileBytes } from "./FileBodies.ts"
import { type Document, deref, type Operation, type Schema } from "./OpenApiDocument.ts"
import {
  controlChar,
  loneSurrogate,
  hostileText,
  segment,
  queryArbitrary,
  idempotencyKey,
  contentType,
  credentialArbitrary
} from "./HostileParts.ts"

/**
 * fast-check arbitraries of requests for one operation of an OpenAPI document:
 * every parameter, header and body at once, valid (as far as the schema can tell)
 * or hostile (injections, malformed escapes, broken JSON, deep nesting, huge bodies).
 */

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
  /** A file (an import's CSV or NDJSON), sent with its own type when the case's content type is `auto`. */
  | { readonly kind: "file"; readonly file: FileBody }

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
  /** What a file's rows are made of, for an operation whose body is a file (an import's: the create's bodies). */
  readonly records?: fc.Arbitrary<unknown> | undefined
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

/**
 * Values of a schema, valid as far as it can tell (hints fill in what it cannot) or with one field
 * wrong, dropped or added: what an import's rows are made of, when they are checked as a create's body.
 */
export const recordArbitrary = (
  document: Document,
  schema: Schema,
  hints: Readonly<Record<string, fc.Arbitrary<unknown>>> = {}
): fc.Arbitrary<unknown> => {
  const valid = valueArbitrary(document, schema, hints)
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 1, arbitrary: fc.tuple(valid, mutation).map(([value, change]) => applyMutation(value, change)) }
  )
}

const bodyArbitrary = (
  document: Document,
  operation: Operation,
  hints: Readonly<Record<string, fc.Arbitrary<unknown>>>,
  file: fc.Arbitrary<Body> | undefined
): fc.Arbitrary<Body> => {
  const none = fc.constant<Body>({ kind: "none" })
  if (operation.requestBody === undefined && file !== undefined) {
    const stray = adversarial(fc.jsonValue({ maxDepth: 1 }), { fields: [], structural: [] })
    return fc.oneof({ weight: 12, arbitrary: file }, { weight: 1, arbitrary: none }, { weight: 1, arbitrary: stray })
  }
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

/** A query value as text: a string as it is, anything else as JSON (a mapping's object). */
const queryText = (value: unknown): Segment => ({
  kind: "text",
  text: typeof value === "string" ? value : (JSON.stringify(value) ?? "")
})

/** The declared query parameters that can be given a valid value (an enum's, or a hint's), each sometimes; nothing else. */
const plainQuery = (
  document: Document,
  operation: Operation,
  hints: Readonly<Record<string, fc.Arbitrary<unknown>>>
): fc.Arbitrary<Array<QueryEntry>> => {
  const entries = operation.parameters
    .filter((parameter) => parameter.in === "query")
    .flatMap((parameter) => {
      const s = deref(document, parameter.schema)
      const hint = hints[parameter.name]
      const value =
        hint !== undefined ? hint : Array.isArray(s.enum) && s.enum.length > 0 ? fc.constantFrom(...s.enum) : undefined
      if (value === undefined) return []
      return [
        fc.option(
          value.map((v): QueryEntry => ({ name: { kind: "text", text: parameter.name }, value: queryText(v) })),
          { nil: undefined }
        )
      ]
    })
  return fc.tuple(...entries).map((given) => given.filter((entry) => entry !== undefined))
}

/**
 * Requests for one operation: every parameter, header and body at once, valid or not. For an operation
 * whose body is a file, half the cases are otherwise plain (the allowed credential, declared query
 * values, a fresh Idempotency-Key or none, the file's own type), so the server gets as far as reading the
 * file; the other half send a file with the rest hostile, like any operation's cases.
 */
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
  const hints = options.hints ?? {}
  const file =
    operation.files.length === 0
      ? undefined
      : fileArbitrary({
          types: operation.files,
          records:
            options.records ??
            fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 })
        }).map((value): Body => ({ kind: "file", file: value }))
  const chunked = fc.oneof({ weight: 7, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
  const hostile = fc.record({
    params: fc.record(params),
    query: queryArbitrary(document, operation, hasKnown),
    credential: credentialArbitrary(options.credentials),
    // Sent on every operation: where it is not declared it must be ignored.
    idempotencyKey,
    contentType,
    chunked,
    body: bodyArbitrary(document, operation, hints, file)
  })
  if (file === undefined) return hostile
  const plain = fc.record({
    params: fc.record(params),
    query: plainQuery(document, operation, hints),
    credential: fc.constant(options.credentials[0]!),
    idempotencyKey: fc.option(fc.uuid(), { nil: undefined }),
    contentType: fc.constant("auto"),
    chunked,
    body: file
  })
  return fc.oneof(hostile, plain)
}

/** Ids that exist when a request is built, by operation and parameter name. */
export type KnownIds = (operation: Operation, parameter: string) => ReadonlyArray<string>

/** The bytes a body description stands for, built only now (deep and huge ones are large). */
export const bodyText = (body: Body): string | Uint8Array | undefined => {
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
    case "file":
      return fileBytes(body.file)
  }
}

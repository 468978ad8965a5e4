import { isObject } from "../internal/json.ts"
import { type Document, deref, type Schema } from "./OpenApiDocument.ts"

/** Checks a JSON value against a schema of an OpenAPI document. */

export interface Mismatch {
  /** Where in the response: `status`, `header x-request-id`, or `$.leads[0].id` in the body. */
  readonly path: string
  readonly message: string
}

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

import { isObject } from "../internal/json.ts"
import { send } from "./RawHttp.ts"

/** A server's OpenAPI document as the fuzzer reads it: its operations, parameters, bodies and responses. */

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
  /** The media types of a body that is a file of text, not JSON (an import's `text/csv`): a string schema's. */
  readonly files: ReadonlyArray<string>
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

/** The non-JSON media types whose schema is a string: a body that is a file, sent as it is. */
const fileTypesOf = (document: Document, holder: unknown): Array<string> => {
  if (!isObject(holder)) return []
  const content = deref(document, holder).content
  if (!isObject(content)) return []
  return Object.entries(content)
    .filter(([name, media]) => {
      if (/^application\/([\w.-]+\+)?json\b/.test(name) || !isObject(media) || !isObject(media.schema)) return false
      return deref(document, media.schema).type === "string"
    })
    .map(([name]) => name)
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
        files: fileTypesOf(document, raw.requestBody),
        responses,
        security
      })
    }
  }
  return found
}

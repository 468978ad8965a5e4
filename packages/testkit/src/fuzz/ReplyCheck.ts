import { isObject } from "../internal/json.ts"
import { type Document, deref, type Operation, type Schema } from "./OpenApiDocument.ts"
import type { Reply } from "./RawHttp.ts"
import { checkValue, type Mismatch } from "./SchemaCheck.ts"

/** Checks a server's answer against what its OpenAPI document and the wire contract promise. */

/**
 * The codes the contracts pair with each error status (docs/contract.md, docs/contract-messaging.md,
 * docs/contract-commerce-ai.md), written apart from the server's error declarations. A resource's
 * own error is accepted where its operation declares it (`declaredCodes`).
 */
export const ERROR_CODES: ReadonlyMap<number, ReadonlyArray<string>> = new Map([
  [400, ["validation_error"]],
  [401, ["unauthorized"]],
  [403, ["forbidden"]],
  [404, ["not_found"]],
  [
    409,
    [
      "conflict",
      "idempotency_in_progress",
      "customer_service_window_closed",
      "invalid_transition",
      "insufficient_stock"
    ]
  ],
  [412, ["precondition_failed"]],
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

/** The `code`s a declared error schema allows: each branch's `code` enum or const, through `$ref`s and unions. */
const declaredCodes = (document: Document, schema: Schema | undefined, depth = 0): ReadonlyArray<string> => {
  if (schema === undefined || depth > 8) return []
  const s = deref(document, schema)
  const branches = [s.anyOf, s.oneOf].filter(Array.isArray).flat() as ReadonlyArray<Schema>
  if (branches.length > 0) return branches.flatMap((branch) => declaredCodes(document, branch, depth + 1))
  const code = isObject(s.properties) && isObject(s.properties.code) ? deref(document, s.properties.code) : undefined
  if (code === undefined) return []
  if (Array.isArray(code.enum)) return code.enum.filter((value): value is string => typeof value === "string")
  return typeof code.const === "string" ? [code.const] : []
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
    // A success declared without a JSON schema is a file (a message's media, an export of leads): not JSON.
    const file = reply.status < 300 && !/^application\/json\b/i.test(reply.headers["content-type"] ?? "")
    return reply.text === "" || file ? undefined : { path: "$", message: "expected no body" }
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
  if (
    errorCodes !== undefined &&
    isObject(body) &&
    !errorCodes.includes(body.code as string) &&
    !declaredCodes(document, schema).includes(body.code as string)
  ) {
    return { path: "$.code", message: `expected ${errorCodes.join(" or ")} for a ${reply.status}, got ${body.code}` }
  }
  return undefined
}

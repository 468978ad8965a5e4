import type { Operation } from "./OpenApiDocument.ts"
import type { HttpRequest } from "./RawHttp.ts"
import { bodyText, type FuzzCase, type KnownIds, type Segment } from "./RequestArbitrary.ts"

/** Turns a generated case into the exact request to send, and describes a request for a failure message. */

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
  const auto =
    fuzzCase.body.kind === "file" ? fuzzCase.body.file.type : body === undefined ? undefined : "application/json"
  const type = fuzzCase.contentType === "auto" ? auto : fuzzCase.contentType
  if (type !== undefined) headers["content-type"] = type
  return {
    method: operation.method,
    path: query === "" ? path : `${path}?${query}`,
    headers,
    body,
    chunked: body !== undefined && fuzzCase.chunked
  }
}

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

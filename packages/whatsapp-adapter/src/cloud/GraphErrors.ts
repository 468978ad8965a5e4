import { type Accepted, OutcomeUnknown, Rejected, type SendFailure } from "@leadline/core/messages/MessageTransport"
import { Result } from "effect"

/**
 * What a send to the Graph API came to (docs/contract-messaging.md §6.3), as pure functions of what
 * came back: Meta says to branch on `error.code`, not on the HTTP status or the subcode.
 */

/** The fields of Meta's error body (`{"error": {...}}`) that the classification reads. */
export interface GraphError {
  readonly code: number
  readonly message: string
  readonly subcode: number | null
}

/**
 * Throughput (130429), pair rate (131056), number upgrade (131057), rate limits (80007, 4), service (2),
 * and 131000, Meta's "something went wrong": its answer says the message failed to send, and Meta's
 * advice is to try again.
 */
export const RETRYABLE_CODES: ReadonlySet<number> = new Set([130429, 131056, 131057, 131000, 80007, 4, 2])

/** The token or its permissions were refused: nothing passes on the channel until someone fixes it. */
export const isChannelErrorCode = (code: number): boolean =>
  code === 0 || code === 10 || code === 190 || (code >= 200 && code <= 299)

/**
 * Failures raised while connecting, before a byte of the request was written: the message
 * was certainly not sent. `UND_ERR_CONNECT_TIMEOUT` is undici's connect timeout.
 */
export const CONNECT_PHASE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "EAI_NODATA",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT"
])

/** undici refusing the request itself (a header it cannot send, a bad URL): nothing left the process. */
export const INVALID_REQUEST_CODES: ReadonlySet<string> = new Set(["UND_ERR_INVALID_ARG"])

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isInteger = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value)

/** The Graph error in a parsed body, if it has one with an integer `code`. */
export const parseGraphError = (body: unknown): GraphError | undefined => {
  if (!isRecord(body) || !isRecord(body.error) || !isInteger(body.error.code)) return undefined
  const error = body.error
  return {
    code: error.code as number,
    message: typeof error.message === "string" && error.message !== "" ? error.message : `Graph error ${error.code}`,
    subcode: isInteger(error.error_subcode) ? error.error_subcode : null
  }
}

/** A Graph error answer; `status` only matters for codes §6.3 does not name. */
export const fromGraphError = (error: GraphError, status: number): Rejected => {
  const rejected = (retryable: boolean, channelError: boolean) =>
    new Rejected({ retryable, retryAfterMs: null, providerCode: error.code, message: error.message, channelError })
  if (RETRYABLE_CODES.has(error.code)) return rejected(true, false)
  // Before the status rule: a refused token stays refused however often it is retried.
  if (isChannelErrorCode(error.code)) return rejected(false, true)
  if (status === 429 || status === 503) return rejected(true, false)
  return rejected(false, false)
}

/** The accepted message in a parsed 2xx body: `messages[0].id`, and `contacts[0].wa_id` when given. */
const acceptedOf = (body: unknown): Accepted | undefined => {
  if (!isRecord(body) || !Array.isArray(body.messages)) return undefined
  const [message] = body.messages
  if (!isRecord(message) || typeof message.id !== "string" || message.id === "") return undefined
  const contact = Array.isArray(body.contacts) ? body.contacts[0] : undefined
  const waId = isRecord(contact) && typeof contact.wa_id === "string" && contact.wa_id !== "" ? contact.wa_id : null
  return { externalId: message.id, waId }
}

const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/**
 * A 4xx whose body is not Graph's (a proxy, a load balancer): the request was refused, so nothing
 * was sent. Too many requests (429) and a request the server gave up waiting for (408) may pass
 * later; any other refusal would be refused again.
 */
const refusedWithoutGraphError = (status: number): Rejected =>
  new Rejected({
    retryable: status === 429 || status === 408,
    retryAfterMs: null,
    providerCode: null,
    message: `HTTP ${status} without a Graph error body`,
    channelError: false
  })

/** Classifies a complete answer: its HTTP status and its body as text. */
export const classifyResponse = (status: number, text: string): Result.Result<Accepted, SendFailure> => {
  const parsed = parseJson(text)
  const refused = status >= 400 && status < 500
  if (!parsed.ok) {
    return Result.fail(
      refused
        ? refusedWithoutGraphError(status)
        : new OutcomeUnknown({ reason: `HTTP ${status} with a body that is not JSON` })
    )
  }
  if (status >= 200 && status < 300) {
    const accepted = acceptedOf(parsed.value)
    if (accepted !== undefined) return Result.succeed(accepted)
  }
  const error = parseGraphError(parsed.value)
  if (error !== undefined) return Result.fail(fromGraphError(error, status))
  if (refused) return Result.fail(refusedWithoutGraphError(status))
  // Meta may have taken the message and failed to say so: never a reason to send it again.
  return Result.fail(
    new OutcomeUnknown({
      reason:
        status >= 200 && status < 300
          ? `HTTP ${status} without messages[0].id`
          : `HTTP ${status} without a Graph error body`
    })
  )
}

/** A read receipt's answer: Meta's `{"success": true}`, or a send's failures. */
export const classifyReadResponse = (status: number, text: string): Result.Result<void, SendFailure> => {
  const parsed = parseJson(text)
  if (status >= 200 && status < 300 && parsed.ok && isRecord(parsed.value) && parsed.value.success === true) {
    return Result.succeed(undefined)
  }
  if (parsed.ok) {
    const error = parseGraphError(parsed.value)
    if (error !== undefined) return Result.fail(fromGraphError(error, status))
  }
  return Result.fail(
    new OutcomeUnknown({
      reason:
        status >= 200 && status < 300
          ? `HTTP ${status} without success: true`
          : `HTTP ${status} without a Graph error body`
    })
  )
}

/** An upload's answer: Meta's `{"id": "<media id>"}`, or a send's failures. */
export const classifyUploadResponse = (status: number, text: string): Result.Result<string, SendFailure> => {
  const parsed = parseJson(text)
  if (status >= 200 && status < 300 && parsed.ok && isRecord(parsed.value)) {
    const id = parsed.value.id
    if (typeof id === "string" && id !== "") return Result.succeed(id)
  }
  if (parsed.ok) {
    const error = parseGraphError(parsed.value)
    if (error !== undefined) return Result.fail(fromGraphError(error, status))
  }
  if (status >= 400 && status < 500) return Result.fail(refusedWithoutGraphError(status))
  return Result.fail(
    new OutcomeUnknown({
      reason:
        status >= 200 && status < 300 ? `HTTP ${status} without an id` : `HTTP ${status} without a Graph error body`
    })
  )
}

/**
 * An upload's failure as the sender takes it: an unknown outcome is a refusal worth retrying, since
 * an upload sends nothing (at worst Graph keeps a file twice).
 */
export const uploadFailure = (failure: SendFailure): Rejected =>
  failure._tag === "Rejected"
    ? failure
    : new Rejected({
        retryable: true,
        retryAfterMs: null,
        providerCode: null,
        message: `the upload got no answer: ${failure.reason}`,
        channelError: false
      })

/** Every error in a cause chain: `cause` links and the members of an AggregateError (one per address tried). */
const errorsIn = (root: unknown): ReadonlyArray<Record<string, unknown>> => {
  const found: Array<Record<string, unknown>> = []
  const pending: Array<unknown> = [root]
  while (pending.length > 0 && found.length < 20) {
    const current = pending.shift()
    if (!isRecord(current) && !(current instanceof Error)) continue
    const error = current as Record<string, unknown>
    if (found.includes(error)) continue
    found.push(error)
    if (error.cause !== undefined) pending.push(error.cause)
    if (Array.isArray(error.errors)) pending.push(...error.errors)
  }
  return found
}

const describe = (errors: ReadonlyArray<Record<string, unknown>>): string => {
  // The root cause (a refused address, a reset) says most; wrappers only add noise.
  const deepest = errors.findLast((error) => typeof error.message === "string" && error.message !== "")
  const message = typeof deepest?.message === "string" ? deepest.message : "transport failure"
  const code = typeof deepest?.code === "string" ? deepest.code : undefined
  const text = code !== undefined && !message.includes(code) ? `${code}: ${message}` : message
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

/**
 * Classifies a failure of the exchange before any answer arrived. Only errors that carry
 * connect-phase (or request-validation) codes, and no others, prove the request was never
 * written; anything else (reset, socket closed, an unknown error) may have reached Meta.
 */
export const classifyTransportError = (cause: unknown): SendFailure => {
  const errors = errorsIn(cause)
  const codes = errors.map((error) => error.code).filter((code): code is string => typeof code === "string")
  const description = describe(errors)
  if (codes.length > 0 && codes.every((code) => CONNECT_PHASE_CODES.has(code))) {
    return new Rejected({
      retryable: true,
      retryAfterMs: null,
      providerCode: null,
      message: `could not connect to the Graph API: ${description}`,
      channelError: false
    })
  }
  if (codes.length > 0 && codes.every((code) => INVALID_REQUEST_CODES.has(code))) {
    // The same request would be refused the same way: retrying cannot help.
    return new Rejected({
      retryable: false,
      retryAfterMs: null,
      providerCode: null,
      message: `the request could not be sent: ${description}`,
      channelError: false
    })
  }
  return new OutcomeUnknown({ reason: `the connection failed, and the request may have been sent: ${description}` })
}

/** No complete answer in time: the request may have been written and processed. */
export const timedOut = (timeoutMillis: number): OutcomeUnknown =>
  new OutcomeUnknown({ reason: `no complete answer within ${timeoutMillis} ms` })

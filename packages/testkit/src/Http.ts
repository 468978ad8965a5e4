import type { Target } from "./TestServer.ts"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  /** The raw body text, for byte-for-byte comparisons. */
  readonly text: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly body: any
}

export interface CallOptions {
  /** An API key or admin token, sent as `Authorization: Bearer`. */
  readonly auth?: string | undefined
  /** Serialized as JSON with `Content-Type: application/json`. */
  readonly json?: unknown
  /** Sent as is, for malformed and oversized bodies. */
  readonly raw?: string | Uint8Array | undefined
  /** Sent as `multipart/form-data` (an upload), its boundary chosen by fetch. */
  readonly form?: FormData | undefined
  readonly headers?: Record<string, string> | undefined
}

/** One real HTTP request against a target, for wire-level assertions. */
export const call = async (target: Target, method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.auth !== undefined) headers.authorization = `Bearer ${options.auth}`
  let body: string | Uint8Array | FormData | undefined = options.form ?? options.raw
  if (options.json !== undefined) {
    body = JSON.stringify(options.json)
    headers["content-type"] ??= "application/json"
  }
  const response = await fetch(
    `${target.baseUrl}${path}`,
    body === undefined ? { method, headers } : { method, headers, body }
  )
  // An event stream never ends by itself: its answer is the status and headers (and the body is let go).
  if (response.status === 200 && response.headers.get("content-type")?.startsWith("text/event-stream")) {
    await response.body?.cancel()
    return { status: response.status, headers: response.headers, text: "", body: undefined }
  }
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, text, body: parsed }
}

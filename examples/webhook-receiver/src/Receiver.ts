import type { IncomingMessage, ServerResponse } from "node:http"
import { verify } from "@leadline/core/webhooks/Signature"

/** The envelope Leadline POSTs for every event. */
export interface WebhookEvent {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly account_id: string
  readonly data: unknown
}

export interface ReceiverOptions {
  /** The endpoint's secret (`whsec_…`), as registration returned it. */
  readonly secret: string
  /** Gets each event once, after Leadline has been answered 200. */
  readonly onEvent: (event: WebhookEvent) => void | Promise<void>
  /** Called when `onEvent` throws or rejects; logs to stderr unless set. */
  readonly onError?: ((error: unknown, event: WebhookEvent) => void) | undefined
  /** The largest body accepted; 1 MiB unless set. */
  readonly maxBodyBytes?: number | undefined
}

const MAX_BODY_BYTES = 1024 * 1024

const reply = (response: ServerResponse, status: number, body: object) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

/** The raw body, or undefined when it is larger than `limit` bytes. */
const readBody = async (request: IncomingMessage, limit: number): Promise<Buffer | undefined> => {
  const chunks: Array<Buffer> = []
  let size = 0
  // Reads to the end even when too large, so the client gets the 413 rather than a reset connection.
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size <= limit) chunks.push(chunk)
  }
  return size <= limit ? Buffer.concat(chunks) : undefined
}

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

const isEvent = (value: unknown): value is WebhookEvent =>
  typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string"

/**
 * A `node:http` request handler that receives Leadline webhooks: it checks the
 * `X-Service-Signature` over the exact body bytes and the freshness of
 * `X-Service-Timestamp`, answers 401 when either fails, and otherwise answers
 * 200 at once and hands the event on, once per event id.
 */
export const makeHandler = (options: ReceiverOptions) => {
  const limit = options.maxBodyBytes ?? MAX_BODY_BYTES
  const onError =
    options.onError ?? ((error, event) => console.error(`webhook ${event.type} ${event.id} failed:`, error))
  // Delivery is at-least-once, so the same event can come again. A Set forgets on
  // restart and grows forever: production would keep seen ids in a store, with an expiry.
  const seen = new Set<string>()

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== "POST") return reply(response, 405, { error: "method not allowed" })
    const body = await readBody(request, limit)
    if (body === undefined) return reply(response, 413, { error: "body too large" })

    // Verify the bytes as received: re-serialised JSON would not match the signature.
    const verification = await verify({
      secret: options.secret,
      body,
      signature: header(request, "x-service-signature"),
      timestamp: header(request, "x-service-timestamp")
    })
    if (!verification.ok) return reply(response, 401, { error: verification.reason })

    let event: unknown
    try {
      event = JSON.parse(body.toString("utf8"))
    } catch {
      return reply(response, 400, { error: "body is not JSON" })
    }
    if (!isEvent(event)) return reply(response, 400, { error: "not an event" })

    // The id in the signed body, not the unsigned X-Service-Event-Id header.
    if (seen.has(event.id)) return reply(response, 200, { received: true, duplicate: true })
    seen.add(event.id)
    // Answer first: Leadline counts anything slower than 10 s as a failure and retries.
    reply(response, 200, { received: true })
    try {
      await options.onEvent(event)
    } catch (error) {
      onError(error, event)
    }
  }

  return (request: IncomingMessage, response: ServerResponse): void => {
    handle(request, response).catch((error: unknown) => {
      console.error("webhook request failed:", error)
      if (!response.headersSent) reply(response, 500, { error: "internal error" })
    })
  }
}

import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, type Scope } from "effect"

/**
 * A stand-in for Meta's Graph API on an ephemeral loopback port, so a WhatsApp Cloud client
 * is tested through a real socket: it records every request and answers each with the next
 * scripted reply, or with Meta's documented success body once the script runs out (a message's
 * `messages[0].id`, `{"success": true}` for a read receipt, `{"id": …}` for a file uploaded to
 * `POST /{version}/{phone-number-id}/media`).
 */

export type Reply =
  /** 200 with Meta's success body; the wamid is generated unless given. */
  | { readonly kind: "success"; readonly messageId?: string; readonly waId?: string; readonly delayMs?: number }
  /** Meta's error body with this status and `error.code`. */
  | {
      readonly kind: "graphError"
      readonly status: number
      readonly code: number
      readonly subcode?: number
      readonly message?: string
      readonly details?: string
      readonly delayMs?: number
    }
  /** Any status and body, sent as given. */
  | {
      readonly kind: "raw"
      readonly status: number
      readonly body: string
      readonly contentType: string
      readonly delayMs?: number
    }
  /** The request is read, then no answer ever comes (until the server closes). */
  | { readonly kind: "hang" }
  /** The request is read, then the connection is reset (TCP RST) without an answer. */
  | { readonly kind: "reset" }
  /** The request is read, then the socket is destroyed (FIN) without an answer. */
  | { readonly kind: "close" }

/** Titles Meta gives these codes (its error reference), so scripted errors read like real ones. */
const TITLES: Readonly<Record<number, string>> = {
  0: "AuthException",
  2: "Service temporarily unavailable",
  4: "Application request limit reached",
  10: "Permission denied",
  100: "Invalid parameter",
  190: "Access token has expired",
  368: "Temporarily blocked for policies violations",
  80007: "Rate limit issues",
  130429: "Rate limit hit",
  131026: "Message undeliverable",
  131047: "Re-engagement message",
  131048: "Spam rate limit hit",
  131056: "(Business Account, Consumer Account) pair rate limit hit",
  131057: "Account in maintenance mode",
  132000: "Number of parameters does not match the expected number of params",
  132001: "Template does not exist",
  132015: "Template is paused"
}

/** Helpers to script replies. */
export const Reply = {
  success: (
    options: { readonly messageId?: string; readonly waId?: string; readonly delayMs?: number } = {}
  ): Reply => ({
    kind: "success",
    ...options
  }),
  graphError: (
    status: number,
    code: number,
    options: {
      readonly subcode?: number
      readonly message?: string
      readonly details?: string
      readonly delayMs?: number
    } = {}
  ): Reply => ({ kind: "graphError", status, code, ...options }),
  raw: (status: number, body: string, contentType = "application/json", delayMs?: number): Reply => ({
    kind: "raw",
    status,
    body,
    contentType,
    ...(delayMs === undefined ? {} : { delayMs })
  }),
  /** A 500 page from something in front of the API, not a Graph error. */
  html: (status = 500): Reply => ({
    kind: "raw",
    status,
    body: "<!DOCTYPE html><html><head><title>Error</title></head><body>Sorry, something went wrong.</body></html>",
    contentType: "text/html; charset=utf-8"
  }),
  /** 200 with a body that names no message: Meta may or may not have taken it. */
  withoutMessages: (): Reply => ({
    kind: "raw",
    status: 200,
    body: JSON.stringify({ messaging_product: "whatsapp", contacts: [], messages: [] }),
    contentType: "application/json"
  }),
  hang: (): Reply => ({ kind: "hang" }),
  reset: (): Reply => ({ kind: "reset" }),
  close: (): Reply => ({ kind: "close" })
} as const

/** Meta's documented error body (Graph API "Handling errors"). */
export const graphErrorBody = (
  code: number,
  options: {
    readonly subcode?: number
    readonly message?: string
    readonly details?: string
    readonly fbtraceId?: string
  } = {}
) => {
  const title = TITLES[code] ?? "Graph error"
  return {
    error: {
      message: options.message ?? `(#${code}) ${title}`,
      type: "OAuthException",
      code,
      ...(options.subcode === undefined ? {} : { error_subcode: options.subcode }),
      error_data: { messaging_product: "whatsapp", details: options.details ?? title },
      fbtrace_id: options.fbtraceId ?? "AbCdEfGhIjKlMnOpQrStUvW"
    }
  }
}

/** Meta's documented success body for a read receipt (`status: "read"`). */
export const readSuccessBody = { success: true } as const

/** Whether a request is a file upload (`POST /{version}/{phone-number-id}/media`). */
export const isUpload = (request: Pick<RecordedRequest, "method" | "path">): boolean =>
  request.method === "POST" && request.path.endsWith("/media")

/** Whether a request body is a read receipt rather than a message. */
export const isReadReceipt = (body: unknown): boolean =>
  typeof body === "object" && body !== null && (body as { status?: unknown }).status === "read"

/** Meta's documented success body for a send to `to`. */
export const successBody = (to: string, messageId: string, waId: string = to) => ({
  messaging_product: "whatsapp",
  contacts: [{ input: to, wa_id: waId }],
  messages: [{ id: messageId }]
})

export interface RecordedRequest {
  readonly method: string
  /** The path, without the query string. */
  readonly path: string
  /** The query string's parameters (the template list's `fields`, `limit`, `after`; a delete's `name`, `hsm_id`). */
  readonly query: Readonly<Record<string, string>>
  /** Header names lower-cased; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  /** The parsed JSON body; undefined when the body is not JSON. */
  readonly body: unknown
  /** The body as received, as text. */
  readonly rawBody: string
  /** The body as received, byte for byte (an upload's file is binary). */
  readonly bytes: Uint8Array
  readonly receivedAt: number
  /** What the server did with it. */
  readonly reply: Reply
  /** The wamid of a success reply to a message (a read receipt has none), or the media id answered to an upload. */
  readonly messageId: string | undefined
}

export interface MockGraph {
  /** The server's base URL, without a trailing slash: the client's `baseUrl`. */
  readonly url: string
  /** Queues replies, one per request in arrival order; once they run out, success. */
  script(...replies: ReadonlyArray<Reply>): void
  requests(): ReadonlyArray<RecordedRequest>
  /** The file uploads among the requests (`POST …/media`), in arrival order. */
  uploads(): ReadonlyArray<RecordedRequest>
  /** The requests, once at least `count` were recorded; rejects after `timeoutMs` (5 s unless set). */
  waitFor(count: number, timeoutMs?: number): Promise<ReadonlyArray<RecordedRequest>>
  /**
   * Serves a file the way Graph's media endpoints do, to an unscripted GET: `GET /{version}/{id}`
   * answers its URL, type, SHA-256 (hex unless given) and size, `GET /files/{id}` its bytes. An id
   * never served answers Graph's error 100, as an expired media id does.
   */
  media(
    id: string,
    bytes: Uint8Array,
    options?: {
      readonly mimeType?: string
      readonly sha256?: string
      /** The first downloads of the bytes answered 503, as a CDN in trouble would. */
      readonly failDownloads?: number
    }
  ): void
  /** Forgets the recorded requests and the remaining script. */
  reset(): void
  /** Stops the server, cutting hung connections. */
  close(): Promise<void>
}

const lowerCaseHeaders = (request: IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value
  }
  return headers
}

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  try {
    for await (const chunk of request) chunks.push(chunk as Buffer)
  } catch {
    // The client gave up mid-body: record what arrived rather than lose the request.
  }
  return Buffer.concat(chunks)
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const recipientOf = (body: unknown): string => {
  const to = typeof body === "object" && body !== null ? (body as { to?: unknown }).to : undefined
  return typeof to === "string" ? to : ""
}

export const start = async (): Promise<MockGraph> => {
  const script: Array<Reply> = []
  const recorded: Array<RecordedRequest> = []
  const timers = new Set<NodeJS.Timeout>()
  const waiters = new Set<{ readonly count: number; readonly settle: (error?: Error) => void }>()
  // Unique across servers too, like real wamids, so tests can tell sends apart.
  const prefix = randomBytes(6).toString("hex")
  let sent = 0
  const files = new Map<
    string,
    { readonly bytes: Uint8Array; readonly mimeType: string; readonly sha256: string; failDownloads: number }
  >()
  let url = ""

  // Graph's media endpoints (the id's URL, then the bytes), for an unscripted GET.
  const serveMedia = (path: string, response: ServerResponse) => {
    const bytesOf = /^\/files\/(.+)$/.exec(path)
    if (bytesOf !== null) {
      const file = files.get(decodeURIComponent(bytesOf[1]!))
      if (file === undefined) return write(response, 404, "application/json", JSON.stringify(graphErrorBody(100)))
      if (file.failDownloads > 0) {
        file.failDownloads--
        return write(response, 503, "text/plain", "Service Unavailable")
      }
      response.writeHead(200, { "content-type": file.mimeType, "content-length": file.bytes.length })
      return response.end(file.bytes)
    }
    const id = decodeURIComponent(path.split("/").at(-1) ?? "")
    const file = files.get(id)
    if (file === undefined) {
      const message = `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`
      return write(response, 400, "application/json", JSON.stringify(graphErrorBody(100, { message, subcode: 33 })))
    }
    return write(
      response,
      200,
      "application/json",
      JSON.stringify({
        messaging_product: "whatsapp",
        url: `${url}/files/${encodeURIComponent(id)}`,
        mime_type: file.mimeType,
        sha256: file.sha256,
        file_size: file.bytes.length,
        id
      })
    )
  }

  const write = (response: ServerResponse, status: number, contentType: string, body: string, delayMs = 0) => {
    const send = () => {
      response.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) })
      response.end(body)
    }
    if (delayMs <= 0) return send()
    const timer = setTimeout(() => {
      timers.delete(timer)
      send()
    }, delayMs)
    timers.add(timer)
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const receivedAt = Date.now()
    // Taken on arrival, so the script follows arrival order even when bodies finish out of order.
    const scripted = script.shift()
    const reply = scripted ?? Reply.success()
    const bytes = await readBody(request)
    const rawBody = bytes.toString("utf8")
    const body = parseJson(rawBody)
    const to = recipientOf(body)
    const receipt = isReadReceipt(body)
    const path = new URL(request.url ?? "/", "http://graph").pathname
    const upload = isUpload({ method: request.method ?? "", path })
    const messageId =
      reply.kind === "success" && !receipt
        ? upload
          ? (reply.messageId ?? `${prefix}${++sent}`.replace(/\D/g, "").padEnd(16, "7"))
          : (reply.messageId ?? `wamid.${Buffer.from(`mock.${prefix}.${++sent}.${to}`).toString("base64")}`)
        : undefined
    recorded.push({
      method: request.method ?? "",
      path,
      query: Object.fromEntries(new URL(request.url ?? "/", "http://graph").searchParams),
      headers: lowerCaseHeaders(request),
      body,
      rawBody,
      bytes: new Uint8Array(bytes),
      receivedAt,
      reply,
      messageId
    })
    for (const waiter of waiters) if (recorded.length >= waiter.count) waiter.settle()
    if (scripted === undefined && request.method === "GET") return serveMedia(recorded.at(-1)!.path, response)
    switch (reply.kind) {
      case "success":
        return write(
          response,
          200,
          "application/json",
          JSON.stringify(
            upload ? { id: messageId } : receipt ? readSuccessBody : successBody(to, messageId!, reply.waId ?? to)
          ),
          reply.delayMs
        )
      case "graphError":
        return write(
          response,
          reply.status,
          "application/json",
          JSON.stringify(graphErrorBody(reply.code, reply)),
          reply.delayMs
        )
      case "raw":
        return write(response, reply.status, reply.contentType, reply.body, reply.delayMs)
      case "hang":
        return
      case "reset":
        request.socket.resetAndDestroy()
        return
      case "close":
        request.socket.destroy()
        return
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => request.socket.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const waitFor = (count: number, timeoutMs = 5_000) =>
    new Promise<ReadonlyArray<RecordedRequest>>((resolve, reject) => {
      if (recorded.length >= count) return resolve([...recorded])
      const waiter = {
        count,
        settle: (error?: Error) => {
          clearTimeout(timer)
          waiters.delete(waiter)
          if (error === undefined) resolve([...recorded])
          else reject(error)
        }
      }
      const timer = setTimeout(
        () =>
          waiter.settle(new Error(`MockGraph: waited ${timeoutMs} ms for ${count} request(s), got ${recorded.length}`)),
        timeoutMs
      )
      waiters.add(waiter)
    })

  const close = async () => {
    for (const timer of timers) clearTimeout(timer)
    timers.clear()
    for (const waiter of waiters) waiter.settle(new Error("MockGraph: closed while waiting for requests"))
    // server.close() alone waits for open connections, and a hung request never ends by itself.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeAllConnections()
    await closed
  }

  return {
    url,
    script: (...replies) => {
      script.push(...replies)
    },
    requests: () => [...recorded],
    uploads: () => recorded.filter(isUpload),
    media: (id, bytes, options = {}) => {
      files.set(id, {
        bytes,
        mimeType: options.mimeType ?? "application/octet-stream",
        sha256: options.sha256 ?? createHash("sha256").update(bytes).digest("hex"),
        failDownloads: options.failDownloads ?? 0
      })
    },
    waitFor,
    reset: () => {
      script.length = 0
      recorded.length = 0
      files.clear()
    },
    close
  }
}

/** `start` for Effect code: the server closes with the scope. */
export const scoped: Effect.Effect<MockGraph, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(start),
  (mock) => Effect.promise(() => mock.close())
)

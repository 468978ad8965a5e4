import { createServer as createNodeServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import { makeUnsafe as makeId } from "@leadline/core/Ids"

const answer = (status: string, error: string, code: string) => {
  const body = JSON.stringify({ error, code })
  return [
    `HTTP/1.1 ${status}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${makeId("req")}`,
    "connection: close",
    "",
    body
  ].join("\r\n")
}

const unavailable = (error: string) => {
  const body = JSON.stringify({ error, code: "service_unavailable" })
  return (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(503, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "retry-after": "1",
      "x-request-id": makeId("req"),
      connection: "close"
    })
    response.end(body)
  }
}

/**
 * Node leaves a request with no `request` listener unanswered for ever. The port
 * opens before the application is attached (and stays open a moment after it is
 * detached at shutdown), so in those moments this answers 503 with Retry-After.
 */
const answerWhileDetached = (server: Server): Server => {
  const starting = unavailable("The server is starting")
  const stopping = unavailable("The server is shutting down")
  let placeholder = starting
  server.on("newListener", (event, listener) => {
    if (event === "request" && listener !== placeholder) server.off("request", placeholder)
  })
  server.on("removeListener", (event, listener) => {
    if (event !== "request" || listener === placeholder || server.listenerCount("request") > 0) return
    placeholder = stopping
    server.on("request", placeholder)
  })
  return server.on("request", placeholder)
}

const CLOSING = "leadline:closing"

/**
 * Announces `close()` as it starts: the server waits (up to its grace period) for responses in
 * flight, and a response that never ends by itself (an event stream) must hear of it to end.
 */
const announceClosing = (server: Server): Server => {
  // One listener per open stream: thousands are expected, not a leak.
  server.setMaxListeners(0)
  const close = server.close.bind(server)
  server.close = (callback) => {
    server.emit(CLOSING)
    return close(callback)
  }
  return server
}

/** Succeeds when the server that took `request` starts closing; never on a server not made here. */
export const closing = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const server = (NodeHttpServerRequest.toIncomingMessage(request).socket as { server?: Server } | undefined)?.server
    if (server === undefined) return
    const onClosing = () => resume(Effect.void)
    server.once(CLOSING, onClosing)
    return Effect.sync(() => server.off(CLOSING, onClosing))
  })

/**
 * A `node:http` server for `NodeHttpServer.layer`. Requests Node rejects before any
 * handler runs (headers over 16 KiB, a malformed request line) would get its bare
 * answer; here they get the contract's JSON error and a request id like any other.
 */
export const createServer = (): Server =>
  announceClosing(
    answerWhileDetached(
      createNodeServer().on("clientError", (error: NodeJS.ErrnoException, socket) => {
        if (!socket.writable || error.code === "ECONNRESET") return socket.destroy()
        socket.end(
          error.code === "HPE_HEADER_OVERFLOW"
            ? answer("431 Request Header Fields Too Large", "The request headers are too large", "headers_too_large")
            : answer("400 Bad Request", "The request could not be read", "validation_error")
        )
      })
    )
  )

import { createServer as createNodeServer, type Server } from "node:http"
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

/**
 * A `node:http` server for `NodeHttpServer.layer`. Requests Node rejects before any
 * handler runs (headers over 16 KiB, a malformed request line) would get its bare
 * answer; here they get the contract's JSON error and a request id like any other.
 */
export const createServer = (): Server =>
  createNodeServer().on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === "ECONNRESET") return socket.destroy()
    socket.end(
      error.code === "HPE_HEADER_OVERFLOW"
        ? answer("431 Request Header Fields Too Large", "The request headers are too large", "headers_too_large")
        : answer("400 Bad Request", "The request could not be read", "validation_error")
    )
  })

import { request as httpRequest, type IncomingHttpHeaders } from "node:http"

/**
 * Requests sent byte for byte over a connection of their own, for the fuzzer:
 * fetch would normalise what the fuzzer means to send malformed.
 */

export interface HttpRequest {
  readonly method: string
  /** Path and query, already encoded. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array | undefined
  readonly chunked: boolean
}

export interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly text: string
}

/**
 * Sends one request on a connection of its own, with the body framed exactly
 * (`Content-Length`, or chunked when asked), and reads the whole answer. A
 * socket error after the answer arrived (the server closing on a 413) is not a
 * failure; no answer in `timeoutMs` is. An event stream is answered by its head alone.
 */
export const send = (baseUrl: string, request: HttpRequest, timeoutMs = 20_000): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const url = new URL(baseUrl)
    const headers: Record<string, string> = { ...request.headers }
    if (request.body !== undefined) {
      if (request.chunked) headers["transfer-encoding"] = "chunked"
      else headers["content-length"] = String(request.body.byteLength)
    }
    let answered = false
    const outgoing = httpRequest(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent: false },
      (incoming) => {
        answered = true
        // An event stream never ends by itself: its answer is the status and headers.
        if (incoming.statusCode === 200 && incoming.headers["content-type"]?.startsWith("text/event-stream")) {
          resolve({ status: 200, headers: incoming.headers, text: "" })
          outgoing.destroy()
          return
        }
        const chunks: Array<Buffer> = []
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
        incoming.on("error", reject)
        incoming.on("end", () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            text: Buffer.concat(chunks).toString("utf8")
          })
        )
      }
    )
    outgoing.setTimeout(timeoutMs, () =>
      outgoing.destroy(new Error(`no answer to ${request.method} ${request.path.slice(0, 200)} in ${timeoutMs} ms`))
    )
    outgoing.on("error", (error) => {
      if (!answered) reject(error)
    })
    if (request.body !== undefined && request.chunked) {
      const half = Math.floor(request.body.byteLength / 2)
      outgoing.write(request.body.subarray(0, half))
      outgoing.end(request.body.subarray(half))
    } else {
      outgoing.end(request.body)
    }
  })

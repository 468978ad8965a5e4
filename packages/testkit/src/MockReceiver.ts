import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { verify, verifyStandard, type Verification } from "@leadline/core/webhooks/Signature"

/**
 * A webhook receiver for tests: a real HTTP server on an ephemeral loopback
 * port, so the delivery code under test goes through a real socket. Any path
 * is an endpoint; each one records what it got, checks the signatures with its
 * secret, and answers as scripted.
 */

/** How to answer one request. Nothing set: 200 at once. */
export interface Behaviour {
  readonly status?: number
  /** Wait this long before answering (or closing). */
  readonly delayMs?: number
  /** Never answer: for testing the sender's timeout. */
  readonly hang?: true
  /** Destroy the socket without answering: for testing network errors. */
  readonly close?: true
  readonly headers?: Readonly<Record<string, string>>
}

export interface RecordedRequest {
  readonly method: string
  /** The path, without the query string. */
  readonly path: string
  /** Header names lower-cased; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  /** The raw body, as received. */
  readonly body: string
  /** When the request arrived, in Date.now() milliseconds. */
  readonly receivedAt: number
  /** Whether each signature scheme checks out with the endpoint's secret (false without one). */
  readonly verified: { readonly service: boolean; readonly standard: boolean }
}

export interface Endpoint {
  readonly path: string
  /** The full URL to register with the sender. */
  readonly url: string
  /** The secret to verify deliveries with; applies to requests that arrive afterwards. */
  setSecret(secret: string | undefined): void
  /** Queues behaviours, one per request in arrival order; once they run out, 200. */
  respond(...behaviours: ReadonlyArray<Behaviour>): void
  requests(): ReadonlyArray<RecordedRequest>
  /** The requests, once at least `count` arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReadonlyArray<RecordedRequest>>
}

export interface MockReceiver {
  /** The server's base URL, without a trailing slash. */
  readonly url: string
  endpoint(path: string): Endpoint
  /** Every recorded request, to any path, in the order they were recorded. */
  all(): ReadonlyArray<RecordedRequest>
  /** Stops the server, cutting hung connections and failing pending waits. */
  close(): Promise<void>
}

export interface StartOptions {
  /**
   * Now, in unix seconds, for the timestamp checks. A sender on an adjustable
   * clock signs with its own time, so pass that clock here; the system clock unless set.
   */
  readonly now?: (() => number) | undefined
  /** How far a signed timestamp may be from now, in seconds; 300 unless set. */
  readonly toleranceSeconds?: number | undefined
}

interface Waiter {
  readonly count: number
  readonly resolve: (requests: ReadonlyArray<RecordedRequest>) => void
  readonly reject: (error: Error) => void
  readonly timer: NodeJS.Timeout
}

interface EndpointState {
  secret: string | undefined
  readonly behaviours: Array<Behaviour>
  readonly requests: Array<RecordedRequest>
  waiters: Array<Waiter>
}

const DEFAULT_WAIT_MS = 5_000

const ok = (verification: Promise<Verification>): Promise<boolean> =>
  // A malformed secret makes the check throw; for a test that is simply "not verified".
  verification.then(
    (result) => result.ok,
    () => false
  )

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

export const start = async (options: StartOptions = {}): Promise<MockReceiver> => {
  const endpoints = new Map<string, EndpointState>()
  const all: Array<RecordedRequest> = []
  const timers = new Set<NodeJS.Timeout>()

  const stateOf = (path: string): EndpointState => {
    let state = endpoints.get(path)
    if (state === undefined) {
      state = { secret: undefined, behaviours: [], requests: [], waiters: [] }
      endpoints.set(path, state)
    }
    return state
  }

  const settleWaiters = (state: EndpointState) => {
    state.waiters = state.waiters.filter((waiter) => {
      if (state.requests.length < waiter.count) return true
      clearTimeout(waiter.timer)
      waiter.resolve([...state.requests])
      return false
    })
  }

  const verifyRequest = async (secret: string | undefined, headers: Record<string, string>, body: Buffer) => {
    if (secret === undefined) return { service: false, standard: false }
    const now = options.now?.()
    const common = { secret, body, now, toleranceSeconds: options.toleranceSeconds }
    const [service, standard] = await Promise.all([
      ok(verify({ ...common, signature: headers["x-service-signature"], timestamp: headers["x-service-timestamp"] })),
      ok(
        verifyStandard({
          ...common,
          id: headers["webhook-id"],
          timestamp: headers["webhook-timestamp"],
          signature: headers["webhook-signature"]
        })
      )
    ])
    return { service, standard }
  }

  const answer = (request: IncomingMessage, response: ServerResponse, behaviour: Behaviour) => {
    if (behaviour.hang) return
    if (behaviour.close) {
      request.socket.destroy()
      return
    }
    response.writeHead(behaviour.status ?? 200, { "content-type": "text/plain", ...behaviour.headers })
    response.end()
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const receivedAt = Date.now()
    const path = new URL(request.url ?? "/", "http://receiver").pathname
    const state = stateOf(path)
    // Taken on arrival, so the script follows arrival order even when bodies finish out of order.
    const behaviour = state.behaviours.shift() ?? {}
    const secret = state.secret
    const headers = lowerCaseHeaders(request)
    const body = await readBody(request)
    const recorded: RecordedRequest = {
      method: request.method ?? "",
      path,
      headers,
      body: body.toString("utf8"),
      receivedAt,
      verified: await verifyRequest(secret, headers, body)
    }
    state.requests.push(recorded)
    all.push(recorded)
    settleWaiters(state)

    if (behaviour.delayMs === undefined || behaviour.hang) return answer(request, response, behaviour)
    const timer = setTimeout(() => {
      timers.delete(timer)
      answer(request, response, behaviour)
    }, behaviour.delayMs)
    timers.add(timer)
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => request.socket.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const endpoint = (rawPath: string): Endpoint => {
    const path = rawPath.startsWith("/") ? rawPath : `/${rawPath}`
    const state = stateOf(path)
    return {
      path,
      url: `${baseUrl}${path}`,
      setSecret: (secret) => {
        state.secret = secret
      },
      respond: (...behaviours) => {
        state.behaviours.push(...behaviours)
      },
      requests: () => [...state.requests],
      waitFor: (count, timeoutMs = DEFAULT_WAIT_MS) =>
        new Promise((resolve, reject) => {
          if (state.requests.length >= count) return resolve([...state.requests])
          const timer = setTimeout(() => {
            state.waiters = state.waiters.filter((waiter) => waiter.timer !== timer)
            reject(
              new Error(
                `MockReceiver: waited ${timeoutMs} ms for ${count} request(s) to ${path}, got ${state.requests.length}`
              )
            )
          }, timeoutMs)
          state.waiters.push({ count, resolve, reject, timer })
        })
    }
  }

  const close = async () => {
    for (const timer of timers) clearTimeout(timer)
    timers.clear()
    for (const [path, state] of endpoints) {
      for (const waiter of state.waiters) {
        clearTimeout(waiter.timer)
        waiter.reject(new Error(`MockReceiver: closed while waiting for ${waiter.count} request(s) to ${path}`))
      }
      state.waiters = []
    }
    // server.close() alone waits for open connections, and a hung request never ends by itself.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeAllConnections()
    await closed
  }

  return { url: baseUrl, endpoint, all: () => [...all], close }
}

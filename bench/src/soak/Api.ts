import type { Running } from "../Processes.ts"

/**
 * The soak's HTTP client: every request goes to one of the live servers (or the one named), and
 * is recorded (which server, when, how long, the status or a dropped connection), so the
 * invariants can tell a failure inside a fault from one outside.
 */

/** A request with no answer after this long is hung (the server's own request timeout is 30 s). */
export const HUNG_MILLIS = 35_000

export interface Server {
  /** 1, 2, … in start order: a restarted server is a new one. */
  readonly id: number
  readonly running: Running
  /** When it was killed; undefined while it runs. */
  killedAt: number | undefined
}

export interface Call {
  readonly server: number
  readonly route: string
  readonly start: number
  readonly end: number
  /** The HTTP status, 0 for a dropped or refused connection, -1 for no answer within HUNG_MILLIS. */
  readonly status: number
  /** For a 5xx: its request id and the start of its body, to find it in the server's log. */
  readonly detail?: string
}

export interface Reply {
  readonly status: number
  readonly replayed: boolean
  readonly body: any
}

export const DROPPED = 0
export const HUNG = -1

export class Api {
  readonly servers: Array<Server> = []
  readonly calls: Array<Call> = []
  private nextId = 1

  add(running: Running): Server {
    const server: Server = { id: this.nextId++, running, killedAt: undefined }
    this.servers.push(server)
    return server
  }

  private readonly open = new Map<number, number>()

  /** The requests under way on a server now. */
  inFlight(server: number): number {
    return this.open.get(server) ?? 0
  }

  live(): Array<Server> {
    return this.servers.filter((server) => server.killedAt === undefined)
  }

  pick(): Server {
    const live = this.live()
    return live[Math.floor(Math.random() * live.length)]!
  }

  /** One request; `route` names it in the figures (its path without ids). */
  async request(
    method: string,
    path: string,
    options: {
      readonly auth?: string
      readonly json?: unknown
      readonly bytes?: Uint8Array
      readonly headers?: Record<string, string>
      readonly server?: Server
      readonly route?: string
    } = {}
  ): Promise<Reply> {
    const server = options.server ?? this.pick()
    const start = Date.now()
    const route = options.route ?? `${method} ${path}`
    const headers: Record<string, string> = { ...options.headers }
    if (options.auth !== undefined) headers.authorization = `Bearer ${options.auth}`
    if (options.json !== undefined || options.bytes !== undefined) headers["content-type"] = "application/json"
    const record = (status: number, detail?: string) => {
      this.open.set(server.id, (this.open.get(server.id) ?? 1) - 1)
      this.calls.push({
        server: server.id,
        route,
        start,
        end: Date.now(),
        status,
        ...(detail === undefined ? {} : { detail })
      })
    }
    this.open.set(server.id, (this.open.get(server.id) ?? 0) + 1)
    try {
      const response = await fetch(`${server.running.url}${path}`, {
        method,
        headers,
        ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
        ...(options.bytes !== undefined ? { body: options.bytes } : {}),
        signal: AbortSignal.timeout(HUNG_MILLIS)
      })
      const text = await response.text()
      record(
        response.status,
        response.status >= 500 ? `${response.headers.get("x-request-id")} ${text.slice(0, 200)}` : undefined
      )
      let body: any
      try {
        body = text === "" ? undefined : JSON.parse(text)
      } catch {
        body = text
      }
      return { status: response.status, replayed: response.headers.get("idempotent-replayed") === "true", body }
    } catch (error) {
      const status = (error as Error).name === "TimeoutError" ? HUNG : DROPPED
      record(status)
      return { status, replayed: false, body: undefined }
    }
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A setup request that must succeed with `status`: anything else stops the soak, with the answer. */
export const expect = async (reply: Promise<Reply>, status: number, what: string): Promise<any> => {
  const answer = await reply
  if (answer.status !== status) {
    throw new Error(`${what}: ${answer.status} (expected ${status}) ${JSON.stringify(answer.body)}`)
  }
  return answer.body
}

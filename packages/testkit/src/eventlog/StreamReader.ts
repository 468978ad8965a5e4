import type { Target } from "../TestServer.ts"

/** One SSE block as it came on the wire: a message (`id`, `event`, `data`) or a comment line. */
export interface Frame {
  readonly id?: string
  readonly event?: string
  readonly data?: string
  readonly comment?: string
  /** The block's raw text, for wire assertions. */
  readonly raw: string
  /** When the reader parsed it (`performance.now()`), for latency measurements. */
  readonly at: number
}

export interface StreamReader {
  readonly status: number
  readonly headers: Headers
  /** Every block so far, in order. */
  readonly frames: ReadonlyArray<Frame>
  /** The next block after the `seen`th (blocks already read count), waiting up to `timeoutMillis`. */
  readonly frame: (seen: number, timeoutMillis?: number) => Promise<Frame>
  /** Waits until a block satisfies `test` (among all read so far or to come). */
  readonly until: (test: (frame: Frame) => boolean, timeoutMillis?: number) => Promise<Frame>
  /** Resolves when the server ends the body. */
  readonly ended: Promise<void>
  /** Drops the connection (as a client that goes away). */
  readonly close: () => void
}

const parse = (raw: string, at: number): Frame => {
  const frame: { -readonly [K in keyof Frame]?: Frame[K] } = { raw, at }
  for (const line of raw.split("\n")) {
    if (line.startsWith(":")) {
      frame.comment = line.slice(1).trim()
      continue
    }
    const colon = line.indexOf(":")
    const field = line.slice(0, colon)
    const value = line.slice(colon + 1).replace(/^ /, "")
    if (field === "id" || field === "event") frame[field] = value
    if (field === "data") frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`
  }
  return frame as Frame
}

/**
 * Opens `GET /api/v1/stream` (or `path`) as a real HTTP client and parses what comes: the tests'
 * and the benchmark's SSE reader. A non-200 answer is returned with its status and no frames.
 */
export const open = async (
  target: Target,
  key: string | undefined,
  options: { readonly query?: string; readonly lastEventId?: string; readonly path?: string } = {}
): Promise<StreamReader> => {
  const controller = new AbortController()
  const headers: Record<string, string> = { accept: "text/event-stream" }
  if (key !== undefined) headers.authorization = `Bearer ${key}`
  if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId
  const response = await fetch(`${target.baseUrl}${options.path ?? "/api/v1/stream"}${options.query ?? ""}`, {
    headers,
    signal: controller.signal
  })
  const frames: Array<Frame> = []
  const waiters = new Set<() => void>()
  const notify = () => {
    for (const waiter of waiters) waiter()
  }
  let done = false
  const ended = (async () => {
    if (response.body === null || response.status !== 200) {
      await response.text().catch(() => undefined)
      return
    }
    const decoder = new TextDecoder()
    let buffer = ""
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true })
        let end = buffer.indexOf("\n\n")
        while (end >= 0) {
          frames.push(parse(buffer.slice(0, end), performance.now()))
          buffer = buffer.slice(end + 2)
          end = buffer.indexOf("\n\n")
        }
        notify()
      }
    } catch {
      // Aborted by close(): the end of this reader.
    } finally {
      done = true
      notify()
    }
  })()

  const until = (test: (frame: Frame) => boolean, timeoutMillis = 5_000) =>
    new Promise<Frame>((resolve, reject) => {
      let checked = 0
      const check = () => {
        for (; checked < frames.length; checked++) {
          if (test(frames[checked]!)) {
            cleanup()
            return resolve(frames[checked]!)
          }
        }
        if (done) {
          cleanup()
          reject(new Error(`the stream ended before the frame came (${frames.length} frames)`))
        }
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`no such frame within ${timeoutMillis} ms (${frames.length} frames)`))
      }, timeoutMillis)
      const cleanup = () => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      waiters.add(check)
      check()
    })

  return {
    status: response.status,
    headers: response.headers,
    frames,
    frame: (seen, timeoutMillis) => {
      let index = 0
      return until(() => index++ >= seen, timeoutMillis)
    },
    until,
    ended,
    close: () => controller.abort()
  }
}

/** The events among the frames (not comments, not a reset), as their envelopes. */
export const eventsIn = (frames: ReadonlyArray<Frame>): Array<{ id: string; type: string; data: any }> =>
  frames.filter((frame) => frame.id !== undefined && frame.data !== undefined).map((frame) => JSON.parse(frame.data!))

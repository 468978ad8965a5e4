import { type LiveEvent, publish } from "./live.ts"

/** One SSE message as `GET /api/v1/stream` writes it (docs/contract.md, "Stream"). */
interface Message {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: string
}

/** The messages of a text/event-stream body: blocks split by a blank line, comments (`:`) skipped. */
const parse = (block: string): Message | undefined => {
  let id: string | undefined
  let event: string | undefined
  const data: Array<string> = []
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue
    const colon = line.indexOf(":")
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "")
    if (field === "id") id = value
    else if (field === "event") event = value
    else if (field === "data") data.push(value)
  }
  return data.length === 0 ? undefined : { id, event, data: data.join("\n") }
}

const sleep = (millis: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, millis)
    signal.addEventListener("abort", () => {
      clearTimeout(timer)
      resolve()
    })
  })

/**
 * Follows the account's event stream for as long as the page is signed in, and hands each event to
 * `live.ts` (the pages listening move by themselves). `fetch` rather than `EventSource`: the key goes
 * in the Authorization header, never in a URL. A stream that ends (a reset for falling behind, a
 * server going away, the network) is opened again from the last event heard, after a growing pause.
 * The function returned stops it.
 */
export const follow = (token: string): (() => void) => {
  const stop = new AbortController()
  let lastEventId: string | undefined
  const run = async () => {
    let pause = 500
    while (!stop.signal.aborted) {
      try {
        const response = await fetch(`${location.origin}/api/v1/stream`, {
          headers: {
            authorization: `Bearer ${token}`,
            accept: "text/event-stream",
            ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId })
          },
          signal: stop.signal
        })
        if (response.ok && response.body !== null) {
          pause = 500
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
          let buffer = ""
          for (;;) {
            const { value, done } = await reader.read()
            if (done) break
            buffer += value.replace(/\r\n?/g, "\n")
            for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
              const message = parse(buffer.slice(0, end))
              buffer = buffer.slice(end + 2)
              if (message === undefined) continue
              if (message.event === "reset") {
                // Fell behind: resume from the last event the server says it sent.
                const reset = JSON.parse(message.data) as { readonly last_event_id: string | null }
                lastEventId = reset.last_event_id ?? lastEventId
                continue
              }
              if (message.id !== undefined) lastEventId = message.id
              publish(JSON.parse(message.data) as LiveEvent)
            }
          }
        } else if (response.status === 401 || response.status === 403) {
          // A key that may not stream (revoked, or without a scope for any event): the pages still work.
          return
        }
      } catch {
        // The network or the server went away: tried again below.
      }
      await sleep(pause, stop.signal)
      pause = Math.min(pause * 2, 15_000)
    }
  }
  void run()
  return () => stop.abort()
}

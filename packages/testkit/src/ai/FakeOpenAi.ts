import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * An OpenAI-compatible server for tests (docs/contract-commerce-ai.md §8): a real HTTP server on an
 * ephemeral loopback port that records every request and answers `POST /v1/chat/completions` as
 * scripted: a completion, an error status, a body that is not JSON, or slowly.
 */

export interface FakeRequest {
  readonly method: string
  readonly path: string
  /** Header names lower-cased. */
  readonly headers: Readonly<Record<string, string>>
  /** The body parsed as JSON (the raw text when it is not). */
  readonly body: any
}

export interface FakeAnswer {
  readonly status?: number
  readonly json?: unknown
  /** Sent as is instead of `json`: for answers that are not JSON. */
  readonly raw?: string
  /** Wait this long before answering. */
  readonly delayMs?: number
}

export interface FakeOpenAi {
  /** Ends with `/v1`: what `LEADLINE_AI_BASE_URL` is set to. */
  readonly baseUrl: string
  requests(): ReadonlyArray<FakeRequest>
  /** How every later completion request is answered. */
  answer(script: (request: FakeRequest) => FakeAnswer): void
  close(): Promise<void>
}

/** A well-formed chat completion saying `text`. */
export const completion = (
  text: string,
  usage: { prompt_tokens: number; completion_tokens: number } = { prompt_tokens: 12, completion_tokens: 5 },
  model = "fake-model-1"
): FakeAnswer => ({
  json: {
    id: "chatcmpl-1",
    object: "chat.completion",
    model,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens }
  }
})

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const start = async (): Promise<FakeOpenAi> => {
  const recorded: Array<FakeRequest> = []
  let script: (request: FakeRequest) => FakeAnswer = () => completion("OK")
  const timers = new Set<NodeJS.Timeout>()

  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
    }
    const path = (request.url ?? "/").split("?")[0]!
    const seen: FakeRequest = { method: request.method ?? "", path, headers, body: parsed(await readBody(request)) }
    recorded.push(seen)
    const answer: FakeAnswer =
      request.method === "POST" && path === "/v1/chat/completions"
        ? script(seen)
        : { status: 404, json: { error: { message: "not found" } } }
    const send = () => {
      if (response.destroyed) return
      const body = answer.raw ?? JSON.stringify(answer.json ?? {})
      response.writeHead(answer.status ?? 200, { "content-type": "application/json" })
      response.end(body)
    }
    if (answer.delayMs === undefined) send()
    else {
      const timer = setTimeout(() => {
        timers.delete(timer)
        send()
      }, answer.delayMs)
      timers.add(timer)
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.address() as AddressInfo

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: () => [...recorded],
    answer: (next) => {
      script = next
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer)
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      // A slow answer still pending holds its connection open: cut it.
      server.closeAllConnections()
      await closed
    }
  }
}

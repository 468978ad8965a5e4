import type { AddressInfo } from "node:net"
import type { IncomingMessage, ServerResponse } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { createServer } from "@leadline/http-adapter/NodeServer"

const servers: Array<ReturnType<typeof createServer>> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

const listening = async () => {
  const server = createServer()
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/me` }
}

const get = async (url: string) => {
  const response = await fetch(url, { signal: AbortSignal.timeout(4000) })
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() }
}

describe("the HTTP server before and after the application is attached", () => {
  it("answers 503 with Retry-After while no application listens, and nothing else once one does", async () => {
    const { server, url } = await listening()
    expect(await get(url)).toEqual({
      status: 503,
      retryAfter: "1",
      body: { error: "The server is starting", code: "service_unavailable" }
    })

    const app = (_request: IncomingMessage, response: ServerResponse) => response.end(JSON.stringify({ app: true }))
    server.on("request", app)
    expect(server.listenerCount("request")).toBe(1)
    expect(await get(url)).toEqual({ status: 200, retryAfter: null, body: { app: true } })

    server.off("request", app)
    expect(await get(url)).toEqual({
      status: 503,
      retryAfter: "1",
      body: { error: "The server is shutting down", code: "service_unavailable" }
    })
  })
})

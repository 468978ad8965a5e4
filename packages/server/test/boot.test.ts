import { request } from "node:http"
import { createServer } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as Setups from "./support/Setups.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/** A port that was free a moment ago: the server must know it before it starts, so the requests can start with it. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

type Outcome =
  | { readonly kind: "refused" }
  | { readonly kind: "answered"; readonly status: number; readonly body: string; readonly retryAfter?: string }
  | { readonly kind: "hung"; readonly detail: string }

/** One GET /api/me with a 4 s deadline: a connection that opens must get an answer before it. */
const probe = (port: number) =>
  new Promise<Outcome>((resolve) => {
    let connected = false
    const req = request({ host: "127.0.0.1", port, path: "/api/me", agent: false, timeout: 4000 }, (response) => {
      let body = ""
      response.on("data", (chunk: Buffer) => {
        body += chunk.toString()
      })
      response.on("end", () => {
        const retryAfter = response.headers["retry-after"]
        resolve({
          kind: "answered",
          status: response.statusCode ?? 0,
          body,
          ...(typeof retryAfter === "string" ? { retryAfter } : {})
        })
      })
    })
    req.on("socket", (socket) => socket.on("connect", () => (connected = true)))
    req.on("timeout", () => req.destroy(new Error("no answer within 4 s")))
    req.on("error", (error: NodeJS.ErrnoException) =>
      resolve(
        !connected && error.code === "ECONNREFUSED"
          ? { kind: "refused" }
          : { kind: "hung", detail: `${error.code ?? ""} ${error.message}` }
      )
    )
    req.setHeader("authorization", "Bearer lk_not-a-real-key")
    req.end()
  })

describe.each(Setups.databases(cleanups))("requests from the moment the server is launched, on %s", (_name, setup) => {
  it("each get an answer: 503 JSON with Retry-After while starting, then the API's own", async () => {
    const { dataDir, env } = await setup()
    const port = await freePort()
    let ready = false
    const starting = ServerProcess.start({ dataDir, env: { ...env, PORT: String(port) } }).then((server) => {
      ready = true
      cleanups.push(() => server.stop())
      return server
    })
    const probes: Array<Promise<Outcome>> = []
    // Every 50 ms from launch until 20 probes after the server said it listens (bounded: 60 s).
    let afterReady = 0
    for (let i = 0; i < 1200 && afterReady < 20; i++) {
      probes.push(probe(port))
      if (ready) afterReady++
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await starting
    const outcomes = await Promise.all(probes)

    const hung = outcomes.filter((outcome) => outcome.kind === "hung")
    expect(hung).toEqual([])
    const answered = outcomes.filter((outcome) => outcome.kind === "answered")
    expect(answered.length).toBeGreaterThanOrEqual(20)
    for (const outcome of answered) {
      if (outcome.status === 503) {
        expect(JSON.parse(outcome.body)).toEqual({ error: "The server is starting", code: "service_unavailable" })
        expect(outcome.retryAfter).toBe("1")
      } else {
        expect({ status: outcome.status, body: JSON.parse(outcome.body) }).toEqual({
          status: 401,
          body: { error: "Invalid or missing API key", code: "unauthorized" }
        })
      }
    }
    // The last probes ran against a started server: they are the API's answers, not the start-up 503.
    expect(answered.at(-1)!.status).toBe(401)
  })
})

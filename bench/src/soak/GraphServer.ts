import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { graphErrorBody, readSuccessBody, successBody } from "@leadline/testkit/whatsapp/MockGraph"
import { type Answer, type Attempt, type FromGraph, type Rates, TAKES, type ToGraph } from "./GraphProtocol.ts"

/**
 * The soak's Graph API, a process of its own (forked by Graph.ts): it answers each send with
 * success or, at the rates it is given, a 429 or 503 Graph error, a 500 or 502 page, a hang, an
 * answer after the sender's timeout, or a slow success; on command it goes away (listener closed,
 * connections cut: connection refused) and comes back on the same port. Every request is reported
 * to the parent at once, keyed by phone number id and `biz_opaque_callback_data` (Leadline's
 * message id), with what was answered and whether Graph "took" the message, so a double send is
 * visible whatever the parent's own state.
 */

let rates: Rates = {
  throttled: 0,
  unavailable: 0,
  pageBeforeTake: 0,
  pageAfterTake: 0,
  hang: 0,
  late: 0,
  slow: 0
}
/** How long a "late" answer waits: past the sender's timeout, so it is never read. */
let lateMillis = 6_000
const prefix = randomBytes(4).toString("hex")
let sent = 0
let port = 0
let server = createServer()
const sockets = new Set<Socket>()
/** Requests read and not yet answered (slow, late, hung): cut when Graph goes away. */
const open = new Map<ServerResponse, Attempt>()
let outbox: Array<Attempt> = []

const send = (message: FromGraph) => process.send?.(message)

const flush = () => {
  if (outbox.length === 0) return
  send({ type: "attempts", attempts: outbox })
  outbox = []
}
setInterval(flush, 50).unref()

const pick = (): Answer => {
  let roll = Math.random()
  for (const [answer, rate] of Object.entries(rates) as Array<[keyof Rates, number]>) {
    if (roll < rate) return answer
    roll -= rate
  }
  return "success"
}

const readBody = async (request: IncomingMessage) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

const json = (response: ServerResponse, status: number, body: unknown, delay = 0) => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  const write = () => {
    open.delete(response)
    if (response.destroyed) return
    response.writeHead(status, {
      "content-type": typeof body === "string" ? "text/html; charset=utf-8" : "application/json",
      "content-length": Buffer.byteLength(text)
    })
    response.end(text)
  }
  if (delay <= 0) write()
  else setTimeout(write, delay)
}

const handle = async (request: IncomingMessage, response: ServerResponse) => {
  const raw = await readBody(request)
  const at = Date.now()
  const path = new URL(request.url ?? "/", "http://graph").pathname
  let body: Record<string, unknown> = {}
  try {
    body = JSON.parse(raw)
  } catch {
    // Not JSON: answered as Graph answers a malformed request.
  }
  const phoneNumberId = decodeURIComponent(path.split("/")[2] ?? "")
  const to = typeof body.to === "string" ? body.to : ""
  if (body.status === "read") return json(response, 200, readSuccessBody)
  if (request.method !== "POST" || !path.endsWith("/messages") || typeof body.biz_opaque_callback_data !== "string") {
    return json(response, 400, graphErrorBody(100))
  }
  const answer = pick()
  const wamid = TAKES.has(answer) ? `wamid.soak.${prefix}.${++sent}` : null
  const attempt: Attempt = {
    phoneNumberId,
    callbackData: body.biz_opaque_callback_data,
    to,
    type: typeof body.type === "string" ? body.type : "",
    at,
    answer,
    wamid
  }
  open.set(response, attempt)
  outbox.push(attempt)
  switch (answer) {
    case "success":
      return json(response, 200, successBody(to, wamid!))
    case "slow":
      return json(response, 200, successBody(to, wamid!), 200 + Math.random() * 1300)
    case "late":
      return json(response, 200, successBody(to, wamid!), lateMillis)
    case "throttled":
      return json(response, 429, graphErrorBody(Math.random() < 0.5 ? 130429 : 80007))
    case "unavailable":
      return json(response, 503, graphErrorBody(2))
    case "pageBeforeTake":
      return json(response, 500, "<!DOCTYPE html><html><body>Internal Server Error</body></html>")
    case "pageAfterTake":
      return json(response, 502, "<!DOCTYPE html><html><body>Bad Gateway</body></html>")
    case "hang":
      // Read, never answered: the sender's timeout ends it.
      return
  }
}

const listen = () =>
  new Promise<void>((resolve, reject) => {
    server = createServer((request, response) => {
      handle(request, response).catch(() => request.socket.destroy())
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      port = (server.address() as AddressInfo).port
      resolve()
    })
  })

/** Away: no listener (connection refused) and every open connection cut; answers how many requests went unanswered. */
const goAway = async () => {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  const unanswered = [...open.keys()].filter((response) => !response.writableEnded).length
  open.clear()
  for (const socket of sockets) socket.destroy()
  sockets.clear()
  await closed
  return unanswered
}

process.on("message", (message: ToGraph) => {
  switch (message.type) {
    case "faults":
      rates = message.rates
      lateMillis = message.lateMillis
      return
    case "down":
      void goAway().then((cut) => {
        flush()
        send({ type: "down", cut })
      })
      return
    case "up":
      void listen().then(() => send({ type: "up" }))
      return
    case "flush":
      flush()
      send({ type: "flushed" })
      return
  }
})

await listen()
send({ type: "ready", port })

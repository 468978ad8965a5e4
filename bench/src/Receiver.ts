import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface Arrival {
  readonly eventId: string
  readonly leadId: string
  readonly createdAt: number
  readonly receivedAt: number
}

/** A minimal receiver: answers 200 at once and notes when each event arrived. */
export const start = async () => {
  const arrivals: Array<Arrival> = []
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const receivedAt = Date.now()
      response.writeHead(200).end()
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      arrivals.push({ eventId: event.id, leadId: event.data.id, createdAt: Date.parse(event.created_at), receivedAt })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals: () => arrivals,
    waitFor: async (count: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs
      while (arrivals.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      if (arrivals.length < count) throw new Error(`receiver got ${arrivals.length} of ${count}`)
    },
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

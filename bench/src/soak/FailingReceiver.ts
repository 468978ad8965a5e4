import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/** A webhook receiver that refuses a share of attempts with a 500, noting each event it accepted. */
export const start = async (failing: number) => {
  const delivered = new Set<string>()
  let attempts = 0
  let failures = 0
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      attempts++
      if (Math.random() < failing) {
        failures++
        response.writeHead(500).end()
        return
      }
      delivered.add(JSON.parse(Buffer.concat(chunks).toString("utf8")).id)
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    delivered,
    stats: () => ({ attempts, failures }),
    close: () => {
      server.closeAllConnections()
      server.close()
    }
  }
}

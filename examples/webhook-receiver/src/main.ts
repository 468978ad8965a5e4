import { createServer } from "node:http"
import { makeHandler } from "./Receiver.ts"

const secret = process.env.LEADLINE_WEBHOOK_SECRET
if (!secret) {
  console.error("Set LEADLINE_WEBHOOK_SECRET to the secret Leadline returned when you registered this endpoint.")
  process.exit(1)
}
const port = Number(process.env.PORT ?? 4000)

const server = createServer(
  makeHandler({
    secret,
    onEvent: (event) => {
      console.log(`${event.type} ${event.id}`)
    }
  })
)

server.listen(port, () => {
  console.log(`Receiving Leadline webhooks on http://localhost:${port}/`)
})

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => server.close(() => process.exit(0)))
}

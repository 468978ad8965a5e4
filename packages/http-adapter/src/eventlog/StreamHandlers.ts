import { Effect, Stream } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { EventStream, type StreamItem } from "@leadline/core/eventlog/EventStream"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import * as NodeServer from "../NodeServer.ts"

const encoder = new TextEncoder()

const HEARTBEAT = encoder.encode(": heartbeat\n\n")

/** An event's SSE message, made once per event: the fan-out hands every stream the same envelope object. */
const messages = new WeakMap<object, Uint8Array>()

/** The SSE wire of one item (docs/contract.md, "Stream"). */
const frame = (item: StreamItem): Uint8Array => {
  switch (item._tag) {
    case "Event": {
      let message = messages.get(item.event)
      if (message === undefined) {
        const { id, type } = item.event
        message = encoder.encode(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(item.event)}\n\n`)
        messages.set(item.event, message)
      }
      return message
    }
    case "Heartbeat":
      return HEARTBEAT
    case "Reset":
      return encoder.encode(
        `event: reset\ndata: ${JSON.stringify({ reason: "too_far_behind", last_event_id: item.lastEventId })}\n\n`
      )
  }
}

/** The opening comment: sends the headers at once, so a client knows the stream is open before any event. */
const OPEN = encoder.encode(": open\n\n")

export const layer = HttpApiBuilder.group(
  Api,
  "stream",
  Effect.fnUntraced(function* (handlers) {
    const events = yield* EventStream
    return handlers.handle("open", ({ query, headers }) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        // A server shutting down ends its streams at once: clients reconnect elsewhere with their last id.
        const items = yield* wire(events.open(query, headers["last-event-id"], NodeServer.closing(request)))
        return HttpServerResponse.stream(Stream.concat(Stream.succeed(OPEN), Stream.map(items, frame)), {
          contentType: "text/event-stream",
          // Proxies must pass each message on as it comes (nginx buffers unless told not to); the
          // connection is the stream's alone, so it closes with it.
          headers: { "cache-control": "no-cache", "x-accel-buffering": "no", connection: "close" }
        })
      })
    )
  })
)

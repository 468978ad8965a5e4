import { Clock, Effect } from "effect"
import * as Hook from "../Hook.ts"
import { InboundReceived } from "../messages/InboundReceived.ts"
import { inboundMedia } from "../messages/Message.ts"
import { MediaQueue } from "./MediaQueue.ts"

/**
 * Inbound files join the fetch queue in the transaction that stores their messages, so none is
 * forgotten by a crash; the fetch itself runs after the commit (the webhook's answer waits for
 * nothing more than this insert).
 */
export const enqueueFiles = Hook.on(
  InboundReceived,
  "whatsapp.media",
  Effect.gen(function* () {
    const queue = yield* MediaQueue
    return (received) => {
      const files = received.messages.filter((message) => inboundMedia(message)?.state === "pending")
      return files.length === 0
        ? Effect.void
        : Effect.flatMap(Clock.currentTimeMillis, (now) => queue.enqueue(received.accountId, files, now))
    }
  })
)

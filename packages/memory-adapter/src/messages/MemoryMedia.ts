import { Context, Effect, Layer, PubSub, Stream } from "effect"
import { ChannelsRepo } from "@leadline/core/channels/ChannelsRepo"
import { keyText, MediaStore, type StoredMedia } from "@leadline/core/messages/MediaStore"
import { inboundMedia } from "@leadline/core/messages/Message"
import { MessagesRepo } from "@leadline/core/messages/MessagesRepo"
import type { ClaimedMedia } from "@leadline/core/whatsapp/MediaQueue"
import { MediaQueue } from "@leadline/core/whatsapp/MediaQueue"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

/** What the fetch queue keeps on a file (the SQL columns of migration 0031). */
interface Waiting {
  readonly accountId: string
  readonly messageId: string
  notBefore: number
  leaseUntil: number
  attempts: number
}

interface Kept {
  readonly contentType: string
  readonly size: number
  readonly chunks: ReadonlyArray<Uint8Array>
}

/**
 * Inbound files in memory: the fetch queue (one process, so a claim is a plain loop) and the
 * kept bytes, as the chunks they arrived in. A message's media is written back through
 * `MessagesRepo.saveDeliveries`, which in memory replaces the whole message.
 */
export const layer = Layer.effectContext(
  Effect.gen(function* () {
    const messages = yield* MessagesRepo
    const channels = yield* ChannelsRepo
    const wake = yield* PubSub.sliding<void>(1)
    const waiting = new Map<string, Waiting>()
    const files = new Map<string, Kept>()

    const queue = MediaQueue.of({
      enqueue: (accountId, enqueued, now) =>
        atomically((tx) =>
          tx.onCommit(() => {
            for (const message of enqueued) {
              waiting.set(MemoryTable.key(accountId, message.id), {
                accountId,
                messageId: message.id,
                notBefore: now,
                leaseUntil: 0,
                attempts: 0
              })
            }
            Effect.runFork(PubSub.publish(wake, undefined))
          })
        ),
      claim: (_worker, now, leaseMillis, limit) =>
        Effect.gen(function* () {
          const due = [...waiting.values()]
            .filter((entry) => entry.notBefore <= now && entry.leaseUntil <= now)
            .sort((a, b) => a.notBefore - b.notBefore || (a.messageId < b.messageId ? -1 : 1))
            .slice(0, limit)
          for (const entry of due) {
            entry.leaseUntil = now + leaseMillis
            entry.attempts++
          }
          const claimed: Array<ClaimedMedia> = []
          for (const entry of due) {
            const message = yield* messages.find(entry.accountId, entry.messageId)
            const channel =
              message === undefined ? undefined : yield* channels.find(entry.accountId, message.channel_id)
            const connection = channel === undefined ? undefined : yield* channels.connection(channel.phone_number_id)
            const media = message === undefined ? null : inboundMedia(message)
            if (media === null || connection === undefined) {
              // The message (its lead) or its channel is gone: nothing left to fetch for.
              waiting.delete(MemoryTable.key(entry.accountId, entry.messageId))
              continue
            }
            claimed.push({
              accountId: entry.accountId,
              messageId: entry.messageId,
              type: message!.type,
              media,
              channel: { phoneNumberId: channel!.phone_number_id, accessToken: connection.accessToken },
              attempts: entry.attempts
            })
          }
          return claimed
        }),
      retryLater: (accountId, messageId, notBefore) =>
        Effect.sync(() => {
          const entry = waiting.get(MemoryTable.key(accountId, messageId))
          if (entry === undefined) return
          entry.notBefore = notBefore
          entry.leaseUntil = 0
        }),
      finish: (accountId, messageId, media, now) =>
        Effect.gen(function* () {
          waiting.delete(MemoryTable.key(accountId, messageId))
          const message = yield* messages.find(accountId, messageId)
          if (message === undefined) return
          yield* messages.saveDeliveries(accountId, [{ ...message, media, updated_at: now }])
        }),
      wakeups: Effect.map(PubSub.subscribe(wake), (subscription) => Effect.asVoid(PubSub.take(subscription)))
    })

    const store = MediaStore.of({
      put: (key, contentType, bytes) =>
        Effect.gen(function* () {
          const chunks = yield* Stream.runCollect(bytes)
          const size = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
          files.set(keyText(key), { contentType, size, chunks })
          return size
        }),
      get: (key) =>
        Effect.sync((): StoredMedia | undefined => {
          const kept = files.get(keyText(key))
          return kept === undefined
            ? undefined
            : { contentType: kept.contentType, size: kept.size, bytes: Stream.fromIterable(kept.chunks) }
        }),
      remove: (key) => Effect.sync(() => void files.delete(keyText(key)))
    })

    return Context.make(MediaQueue, queue).pipe(Context.add(MediaStore, store))
  })
)

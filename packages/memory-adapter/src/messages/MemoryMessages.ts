import { Effect, Layer } from "effect"
import type { Message } from "@leadline/core/messages/Message"
import { MessagesRepo } from "@leadline/core/messages/MessagesRepo"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly message: Message
}

/** Messages by conversation, newest first; a wamid is unique on its channel. */
export const layer = Layer.sync(MessagesRepo)(() => {
  const messages = MemoryTable.make({
    primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.message.id),
    unique: {
      external: (row) =>
        row.message.external_id === null
          ? undefined
          : MemoryTable.key(row.accountId, row.message.channel_id, row.message.external_id)
    },
    indexes: { conversation: (row) => MemoryTable.key(row.accountId, row.message.conversation_id) },
    order: MemoryTable.newestFirst(
      (row: Row) => row.message.created_at,
      (row) => row.message.id
    )
  })

  return MessagesRepo.of({
    list: (accountId, conversationId, page) =>
      Effect.sync(() => {
        const slice = messages.page("conversation", MemoryTable.key(accountId, conversationId), page)
        return { items: slice.items.map((row) => row.message), total: slice.total }
      }),
    find: (accountId, id) => Effect.sync(() => messages.get(MemoryTable.key(accountId, id))?.message),
    insertInbound: (accountId, message) =>
      Effect.map(
        atomically((tx) => messages.insert(tx, { accountId, message })),
        (violation) => violation === undefined
      )
  })
})

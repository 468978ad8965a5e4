import { Effect, Layer, Redacted } from "effect"
import type { Channel } from "@leadline/core/channels/Channel"
import { ChannelsRepo, numberTakenMessage } from "@leadline/core/channels/ChannelsRepo"
import { Conflict } from "@leadline/core/Errors"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly channel: Channel
  readonly accessToken: string
}

/** Channels by account; a `phone_number_id` is unique across accounts. */
export const layer = Layer.sync(ChannelsRepo)(() => {
  const channels = MemoryTable.make({
    primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.channel.id),
    unique: { number: (row) => row.channel.phone_number_id },
    indexes: { account: (row) => row.accountId, businessAccount: (row) => row.channel.business_account_id ?? "" },
    order: MemoryTable.newestFirst(
      (row: Row) => row.channel.created_at,
      (row) => row.channel.id
    )
  })
  const find = (accountId: string, id: string) => channels.get(MemoryTable.key(accountId, id))

  return ChannelsRepo.of({
    insert: (accountId, channel, accessToken) =>
      Effect.flatMap(
        atomically((tx) => channels.insert(tx, { accountId, channel, accessToken })),
        (violation) =>
          violation === undefined ? Effect.void : Effect.fail(new Conflict({ message: numberTakenMessage }))
      ),
    list: (accountId, page) =>
      Effect.sync(() => {
        const slice = channels.page("account", accountId, page)
        return { items: slice.items.map((row) => row.channel), total: slice.total }
      }),
    find: (accountId, id) => Effect.sync(() => find(accountId, id)?.channel),
    update: (accountId, channel, accessToken) =>
      atomically((tx) => {
        const current = find(accountId, channel.id)
        if (current === undefined) return undefined
        // The number never changes, so the unique constraint cannot refuse this.
        channels.update(tx, { accountId, channel, accessToken: accessToken ?? current.accessToken })
        return channel
      }),
    setLastError: (accountId, id, error) =>
      atomically((tx) => {
        const current = find(accountId, id)
        if (current !== undefined)
          channels.update(tx, { ...current, channel: { ...current.channel, last_error: error } })
      }),
    connection: (phoneNumberId) =>
      Effect.sync(() => {
        const row = channels.find("number", phoneNumberId)
        return row === undefined
          ? undefined
          : { accountId: row.accountId, channel: row.channel, accessToken: Redacted.make(row.accessToken) }
      }),
    byBusinessAccount: (businessAccountId) =>
      Effect.sync(() =>
        Array.from(channels.scan("businessAccount", businessAccountId), (row) => ({
          accountId: row.accountId,
          channel: row.channel
        }))
      ),
    setHealth: (accountId, id, health, now) =>
      atomically((tx) => {
        const current = find(accountId, id)
        if (current === undefined) return undefined
        const channel: Channel = { ...current.channel, ...health, updated_at: now }
        channels.update(tx, { ...current, channel })
        return channel
      }),
    active: (accountId) =>
      Effect.sync(() =>
        [...channels.scan("account", accountId)]
          .map((row) => row.channel)
          .filter((channel) => channel.status === "active")
          .reverse()
      ),
    withBusinessAccount: () =>
      Effect.sync(() =>
        [...channels.rows()]
          .filter((row) => row.channel.status === "active" && row.channel.business_account_id !== null)
          .sort((a, b) => a.channel.id.localeCompare(b.channel.id))
          .map((row) => ({
            accountId: row.accountId,
            channel: row.channel,
            accessToken: Redacted.make(row.accessToken)
          }))
      )
  })
})

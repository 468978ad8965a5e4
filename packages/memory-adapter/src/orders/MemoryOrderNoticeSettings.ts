import { Effect, Layer } from "effect"
import { type OrderNoticeSettings, OrderNoticeSettingsRepo } from "@leadline/core/orders/OrderNotices"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly settings: OrderNoticeSettings
}

/** Each account's order-notice settings, one row per account that set them. */
export const layer = Layer.sync(OrderNoticeSettingsRepo)(() => {
  const table = MemoryTable.make({ primaryKey: (row: Row) => row.accountId })
  return OrderNoticeSettingsRepo.of({
    find: (accountId) => Effect.sync(() => table.get(accountId)?.settings),
    save: (accountId, settings) =>
      atomically((tx) => {
        const row = { accountId, settings }
        if (table.get(accountId) === undefined) table.insert(tx, row)
        else table.update(tx, row)
      })
  })
})

import { Effect, Layer } from "effect"
import { type OptOutSettings, OptOutSettingsRepo } from "@leadline/core/optouts/OptOutSettings"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly settings: OptOutSettings
}

/** Each account's opt-out keywords and confirmations, one row per account that set them. */
export const layer = Layer.sync(OptOutSettingsRepo)(() => {
  const table = MemoryTable.make({ primaryKey: (row: Row) => row.accountId })
  return OptOutSettingsRepo.of({
    find: (accountId) => Effect.sync(() => table.get(accountId)?.settings),
    save: (accountId, settings) =>
      atomically((tx) => {
        const row = { accountId, settings }
        if (table.get(accountId) === undefined) table.insert(tx, row)
        else table.update(tx, row)
      })
  })
})

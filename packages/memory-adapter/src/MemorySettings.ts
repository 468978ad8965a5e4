import { Effect } from "effect"
import * as MemoryTable from "./MemoryTable.ts"
import { atomically } from "./MemoryTransaction.ts"

/**
 * An account's setting, one value per account replaced whole (order notices, opt-out keywords):
 * what a settings repository port asks of a store, `find` (undefined: never set) and `save`.
 */
export const perAccount = <S>() => {
  const table = MemoryTable.make({
    primaryKey: (row: { readonly accountId: string; readonly settings: S }) => row.accountId
  })
  return {
    find: (accountId: string): Effect.Effect<S | undefined> => Effect.sync(() => table.get(accountId)?.settings),
    save: (accountId: string, settings: S): Effect.Effect<void> =>
      atomically((tx) => {
        const row = { accountId, settings }
        if (table.get(accountId) === undefined) table.insert(tx, row)
        else table.update(tx, row)
      })
  }
}

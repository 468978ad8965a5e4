import { Layer } from "effect"
import { MessageUsage } from "@leadline/core/usage/MessageUsage"
import { atomically } from "../MemoryTransaction.ts"

/**
 * Counts per account and month; one process runs one check at a time, so the limit holds. Each
 * change is undone with the transaction it ran in, as a row of the SQL store's would be.
 */
export const layer = Layer.sync(MessageUsage)(() => {
  const used = new Map<string, number>()
  const key = (accountId: string, period: string) => `${accountId}\u0000${period}`
  const add = (accountId: string, period: string, n: number) =>
    atomically((tx) => {
      const k = key(accountId, period)
      used.set(k, (used.get(k) ?? 0) + n)
      tx.onRollback(() => used.set(k, (used.get(k) ?? 0) - n))
    })
  return MessageUsage.of({
    reserve: (accountId, period, n, limit) =>
      atomically((tx) => {
        const k = key(accountId, period)
        const now = used.get(k) ?? 0
        if (now + n > limit) return false
        used.set(k, now + n)
        tx.onRollback(() => used.set(k, (used.get(k) ?? 0) - n))
        return true
      }),
    release: (accountId, period, n) => add(accountId, period, -n),
    used: (accountId, period) => atomically(() => used.get(key(accountId, period)) ?? 0)
  })
})

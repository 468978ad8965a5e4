import { Effect, Layer } from "effect"
import { MessageUsage } from "@leadline/core/usage/MessageUsage"

/** Counts per account and month; one process runs one check at a time, so the limit holds. */
export const layer = Layer.sync(MessageUsage)(() => {
  const used = new Map<string, number>()
  const key = (accountId: string, period: string) => `${accountId}\u0000${period}`
  return MessageUsage.of({
    reserve: (accountId, period, n, limit) =>
      Effect.sync(() => {
        const now = used.get(key(accountId, period)) ?? 0
        if (now + n > limit) return false
        used.set(key(accountId, period), now + n)
        return true
      }),
    release: (accountId, period, n) =>
      Effect.sync(() => {
        used.set(key(accountId, period), (used.get(key(accountId, period)) ?? 0) - n)
      }),
    used: (accountId, period) => Effect.sync(() => used.get(key(accountId, period)) ?? 0)
  })
})

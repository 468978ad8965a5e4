import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { MessageUsage } from "@leadline/core/usage/MessageUsage"
import { backendStripe, orDie } from "../internal/store.ts"

/**
 * A reservation takes `n` from its connection's stripe when that stripe's allowance covers it
 * and was shared out for the current limit; otherwise the slow path counts every stripe under
 * a lock and shares what is left out again: when a stripe runs dry, at the start of a month,
 * after a plan change, and near the limit, where sends must queue to stay exact. Both paths
 * are one function call (migration 0006).
 */
export const layer = Layer.effect(
  MessageUsage,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const mine = sql.unsafe(backendStripe)

    return MessageUsage.of({
      reserve: (accountId, period, n, limit) =>
        orDie(
          sql<{
            fits: boolean
          }>`SELECT leadline_reserve_messages(${accountId}::uuid, ${period}, ${n}::int, ${limit}::int) AS fits`
        ).pipe(Effect.map(([row]) => row?.fits === true)),
      release: (accountId, period, n) =>
        // Any stripe of the period will do: only the sums count. Given back to the allowance, so others may use it.
        orDie(sql`
          UPDATE message_usage SET used = used - ${n}::int, allowance = allowance + ${n}::int
          WHERE account_id = ${accountId}::uuid AND period = ${period} AND stripe = ${mine}`).pipe(Effect.asVoid),
      used: (accountId, period) =>
        orDie(sql<{ used: number }>`
          SELECT coalesce(sum(used), 0)::int AS used FROM message_usage
          WHERE account_id = ${accountId}::uuid AND period = ${period}`).pipe(Effect.map(([row]) => row?.used ?? 0))
    })
  })
)

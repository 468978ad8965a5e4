import { Clock, Effect, Schema } from "effect"
import { type Account, PLANS } from "../accounts/Account.ts"
import { type MessageUsage, periodOf } from "./MessageUsage.ts"

/** Messages used this calendar month (UTC) against the plan's monthly limit. */
export const MonthlyUsage = Schema.Struct({ messages_used: Schema.Int, messages_limit: Schema.Int }).annotate({
  identifier: "MonthlyUsage"
})
export type MonthlyUsage = typeof MonthlyUsage.Type

/**
 * The account's use of its plan this month, as `/api/usage` shows it to the account and the
 * operator's account view shows it to the operator (docs/contract-messaging.md §10).
 */
export const monthlyUsage = (usage: MessageUsage["Service"], account: Account): Effect.Effect<MonthlyUsage> =>
  Effect.gen(function* () {
    const now = new Date(yield* Clock.currentTimeMillis).toISOString()
    return { messages_used: yield* usage.used(account.id, periodOf(now)), messages_limit: PLANS[account.planId] }
  })

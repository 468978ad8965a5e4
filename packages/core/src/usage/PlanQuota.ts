import { Effect } from "effect"
import { PLANS } from "../accounts/Account.ts"
import type { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { LimitReached } from "../Errors.ts"
import { type MessageUsage, periodOf } from "./MessageUsage.ts"

/**
 * Reserves `n` messages of the account's plan in the month of `now`, all or none: a single send
 * and a campaign's whole audience alike (docs/contract-messaging.md §10). Fails with `LimitReached`,
 * reserving nothing, when the plan cannot cover them.
 */
export const reserveWithinPlan = (
  accounts: AccountsRepo["Service"],
  usage: MessageUsage["Service"],
  accountId: string,
  now: string,
  n: number
): Effect.Effect<void, LimitReached> =>
  Effect.gen(function* () {
    const account = yield* accounts.findAccount(accountId)
    if (account === undefined) return yield* Effect.die(new Error(`account ${accountId} vanished`))
    const limit = PLANS[account.planId]
    const period = periodOf(now)
    if (!(yield* usage.reserve(accountId, period, n, limit))) {
      const used = yield* usage.used(accountId, period)
      return yield* new LimitReached({ used, limit, plan: account.planId })
    }
  })

import { Duration, Effect, Layer, Schedule } from "effect"
import { Conversations } from "./Conversations.ts"

/**
 * Reopens snoozed conversations whose `snoozed_until` has passed (CONTRACT-MESSAGING §4.2:
 * checked every 30 s). One query per round, whatever the number of accounts.
 */
export const layer = (options: { readonly intervalMillis?: number | undefined } = {}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const conversations = yield* Conversations
      const round = conversations.reopenSnoozed.pipe(
        Effect.catchCause((cause) => Effect.logWarning("Reopening snoozed conversations failed", cause))
      )
      yield* Effect.forkScoped(Effect.repeat(round, Schedule.spaced(Duration.millis(options.intervalMillis ?? 30_000))))
    })
  )

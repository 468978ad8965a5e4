import { Effect, Layer } from "effect"
import * as Loop from "../internal/loop.ts"
import { Conversations } from "./Conversations.ts"

/**
 * Reopens snoozed conversations whose `snoozed_until` has passed (docs/contract-messaging.md §4.2:
 * checked every 30 s). One query per round, whatever the number of accounts.
 */
export const layer = (options: { readonly intervalMillis?: number | undefined } = {}) =>
  Layer.effectDiscard(
    Effect.flatMap(Conversations, (conversations) =>
      Loop.every("Reopening snoozed conversations", options.intervalMillis ?? 30_000, conversations.reopenSnoozed)
    )
  )

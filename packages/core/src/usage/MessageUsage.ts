import { Context, type Effect } from "effect"

/** The UTC month a message counts in: `YYYY-MM` of its creation (docs/contract-messaging.md §10). */
export const periodOf = (iso: string): string => iso.slice(0, 7)

/**
 * Outbound messages counted per account and UTC month. A reservation never takes the count
 * past the limit, however many run at once; far from the limit one account's reservations do
 * not wait on each other (docs/performance.md, "Per-account counters").
 */
export class MessageUsage extends Context.Service<
  MessageUsage,
  {
    /** Counts `n` more in the period if that keeps it at or under `limit`; false (nothing counted) otherwise. */
    readonly reserve: (accountId: string, period: string, n: number, limit: number) => Effect.Effect<boolean>
    /** Gives `n` back: their messages failed or were cancelled. */
    readonly release: (accountId: string, period: string, n: number) => Effect.Effect<void>
    readonly used: (accountId: string, period: string) => Effect.Effect<number>
  }
>()("core/MessageUsage") {}

import { Context, type Effect } from "effect"
import type { Envelope } from "../events/Event.ts"

/** Which of an account's events, and where the page starts. */
export interface EventQuery {
  /** Only these types (already narrowed to what the caller may see). */
  readonly types: ReadonlyArray<string>
  /** Nothing older than this (the log's 30 days), inclusive. */
  readonly since: string
  readonly createdAfter: string | undefined
  readonly createdBefore: string | undefined
  /** Newest first from the top, or just older than (`after`) or just newer than (`before`) an event id. */
  readonly window:
    | { readonly by: "first" }
    | { readonly by: "after"; readonly id: string }
    | { readonly by: "before"; readonly id: string }
  readonly limit: number
}

/**
 * The account's events as the outbox recorded them (docs/contract.md, "Events"), newest first: an
 * event's id is a ULID, so id order is the order they were recorded in. Adapters: the outbox's
 * table in SQL, the memory store's list.
 */
export class EventLog extends Context.Service<
  EventLog,
  {
    /** A page in newest-first order and whether there are more past it (newer, for `before`). */
    readonly list: (
      accountId: string,
      query: EventQuery
    ) => Effect.Effect<{ readonly items: ReadonlyArray<Envelope>; readonly hasMore: boolean }>
    readonly find: (accountId: string, id: string) => Effect.Effect<Envelope | undefined>
  }
>()("core/EventLog") {}

import { Context, type Effect, type Scope } from "effect"
import type { Envelope } from "../events/Event.ts"

/**
 * A place in the log's commit order, opaque outside the adapter that made it. Event ids are
 * made before their transaction commits, so concurrent commits can become visible out of id
 * order; a position orders events as readers may safely see them, so a reader that has passed
 * a position never misses an event committed later.
 */
export type Position = string

export interface Positioned {
  readonly position: Position
  readonly event: Envelope
}

/**
 * The event log in commit order, for `GET /api/v1/stream` (`EventStream.ts`). Adapters: on SQL,
 * the outbox's table ordered by writing transaction below the oldest still running (with a
 * NOTIFY at each commit that records events); in memory, the order of commits.
 */
export class EventFeed extends Context.Service<
  EventFeed,
  {
    /** A position at or after every event committed so far: where a stream without a resume point starts. */
    readonly head: Effect.Effect<Position>
    /**
     * Every account's events after `after`, in commit order, at most `limit`; `reached` is where the
     * next read starts (past these, or a newer `head` when there were fewer than `limit`), and
     * `pending` says events are committed that cannot be read safely yet (read again soon).
     */
    readonly next: (
      after: Position,
      limit: number
    ) => Effect.Effect<{
      readonly items: ReadonlyArray<Positioned>
      readonly reached: Position
      readonly pending: boolean
    }>
    /** One account's events of these types after `after` and at or before `upTo`, in commit order, at most `limit`. */
    readonly between: (
      accountId: string,
      types: ReadonlyArray<string>,
      after: Position,
      upTo: Position,
      limit: number
    ) => Effect.Effect<ReadonlyArray<Positioned>>
    /** Where an account's event stands, or undefined when the log does not hold it. */
    readonly positionOf: (accountId: string, eventId: string) => Effect.Effect<Position | undefined>
    /** An effect that waits for the next commit that recorded events (listening while the scope is open). */
    readonly wakeups: Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  }
>()("core/EventFeed") {}

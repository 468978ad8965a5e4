import { Context, type Effect } from "effect"
import type { DomainError } from "./Errors.ts"

/**
 * Runs an effect as one unit of work: everything the ports write inside it
 * commits together, or none of it does when the effect fails. Nested calls join
 * the outer unit.
 */
export class Transactor extends Context.Service<
  Transactor,
  {
    readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
>()("core/Transactor") {}

/**
 * Writes a caller defers to the very end of its unit of work, after its own last write and right
 * before the commit: for a write that locks a row every concurrent request wants (a product's
 * stock), so that the lock is held for the commit only. Provided by a caller that writes after the
 * operation it runs (the idempotency record after the request's writes); a deferred write's failure
 * fails that caller's unit of work, which rolls back whole. Where no caller provides it, an
 * operation runs the write in place, last in its own transaction.
 */
export class FinalWrites extends Context.Service<
  FinalWrites,
  { readonly defer: (write: Effect.Effect<void, DomainError>) => Effect.Effect<void> }
>()("core/FinalWrites") {}

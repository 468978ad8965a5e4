import { Context, type Effect } from "effect"

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

import { type Context, Effect, Layer } from "effect"

/**
 * Where a lower resource lets the resources above it react, without importing them: leads
 * offers "a lead is being removed", messages "messages left the queue" and "messages were
 * received", knowledge "a source was removed". The lower resource defines the hook (a service
 * key holding its `Handlers`) and runs it inside its own unit of work; a higher resource's slice
 * adds a handler (`on`), so its reaction commits or rolls back with the change. The direction of
 * dependence between resources is in docs/design.md ("Which resource may import which").
 */
export interface Handlers<A, R> {
  /** Adds a reaction; handlers run in the order of their names, so a run does not depend on how layers were built. */
  readonly add: (name: string, handler: (input: A) => Effect.Effect<void, never, R>) => void
  /** Runs every reaction to `input`, one after another. */
  readonly run: (input: A) => Effect.Effect<void, never, R>
}

/** An empty set of handlers: the service of a hook's key, made once per build of the services. */
export const handlers = <A, R>(): Handlers<A, R> => {
  const named: Array<{ readonly name: string; readonly handler: (input: A) => Effect.Effect<void, never, R> }> = []
  return {
    add: (name, handler) => {
      named.push({ name, handler })
      named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    },
    run: (input) => Effect.forEach(named, ({ handler }) => handler(input), { discard: true })
  }
}

/** The layer that gives a hook's key an empty set of handlers. */
export const layer = <I, A, R>(key: Context.Key<I, Handlers<A, R>>): Layer.Layer<I> =>
  Layer.sync(key, () => handlers<A, R>())

/**
 * A reaction of a higher resource: a layer that builds `handler` (with the services it needs)
 * and adds it to the hook under `name`.
 */
export const on = <I, A, R, E2, R2>(
  key: Context.Key<I, Handlers<A, R>>,
  name: string,
  handler: Effect.Effect<(input: A) => Effect.Effect<void, never, R>, E2, R2>
): Layer.Layer<never, E2, I | R2> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const hook = yield* key
      hook.add(name, yield* handler)
    })
  )

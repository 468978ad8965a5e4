import { Cause, Deferred, Effect, Exit, Queue, type Scope } from "effect"

/**
 * Work that callers hand in one at a time and that costs about the same for one item as for
 * many (one transaction, a fixed number of statements): while a batch runs, the items that
 * arrive wait for the next one, and then all of them run together. Nothing waits for a timer:
 * one caller alone runs at once, and the busier it gets, the bigger the batches.
 *
 * A batch that fails is run again one item at a time, so one item's failure is its caller's
 * alone. `run` answers one output per input, in order.
 */
export const make = <I, O, E>(
  run: (inputs: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>,
  options: { readonly maxBatch: number }
): Effect.Effect<(input: I) => Effect.Effect<O, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const waiting = yield* Queue.unbounded<{ readonly input: I; readonly done: Deferred.Deferred<O, E> }>()

    const settle = (batch: ReadonlyArray<{ readonly input: I; readonly done: Deferred.Deferred<O, E> }>) =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(run(batch.map((item) => item.input)))
        if (Exit.isSuccess(exit)) {
          yield* Effect.forEach(batch, (item, i) => Deferred.succeed(item.done, exit.value[i]!), { discard: true })
          return
        }
        if (batch.length === 1) {
          yield* Deferred.failCause(batch[0]!.done, exit.cause)
          return
        }
        // Which item failed is not known: each runs alone, and only its own caller sees its failure.
        yield* Effect.forEach(
          batch,
          (item) =>
            Effect.flatMap(Effect.exit(run([item.input])), (alone) =>
              Deferred.done(
                item.done,
                Exit.map(alone, (outputs) => outputs[0]!)
              )
            ),
          { discard: true }
        )
      })

    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.takeBetween(waiting, 1, options.maxBatch), (batch) =>
          // A defect in the bookkeeping itself must not stop the loop every caller waits on.
          settle(batch).pipe(Effect.catchCause((cause) => Effect.logError("group commit failed", Cause.pretty(cause))))
        )
      )
    )

    return (input: I) =>
      Effect.flatMap(Deferred.make<O, E>(), (done) =>
        Effect.andThen(Queue.offer(waiting, { input, done }), Deferred.await(done))
      )
  })

import { Context, Effect, Exit, Layer } from "effect"
import { Transactor } from "@leadline/core/Transactor"

/**
 * What a write may ask of the transaction it runs in. Stores do not call it
 * directly: `MemoryTable` records every write's undo step through it.
 */
export interface Tx {
  /** Records how to undo a write; outside a transaction writes are final and this does nothing. */
  readonly onRollback: (undo: () => void) => void
  /** Runs `after` once the transaction commits (at once outside one), with writes that are final. */
  readonly onCommit: (after: (tx: Tx) => void) => void
}

/** Outside a transaction: every write is final, and what waits for a commit runs at once. */
export const autocommit: Tx = {
  onRollback: () => {},
  onCommit: (after) => after(autocommit)
}

/**
 * The journal of a running transaction. A failed transaction replays the undo
 * steps backwards, so the memory wiring keeps the all-or-nothing promise of
 * the SQL one; work that must only follow a commit (queueing deliveries,
 * waking the webhook worker) waits in `afterCommit`.
 */
class Journal implements Tx {
  readonly undo: Array<() => void> = []
  readonly afterCommit: Array<(tx: Tx) => void> = []
  onRollback(undo: () => void) {
    this.undo.push(undo)
  }
  onCommit(after: (tx: Tx) => void) {
    this.afterCommit.push(after)
  }
}

const CurrentJournal = Context.Reference<Journal | undefined>("memory-adapter/MemoryTransaction/Journal", {
  defaultValue: () => undefined
})

/**
 * Runs `step` with the surrounding transaction (or `autocommit`). The step is
 * synchronous, so no other fiber sees its reads and writes half done: that is
 * what makes a check-then-write (a reservation, a claim) atomic in memory.
 */
export const atomically = <A>(step: (tx: Tx) => A): Effect.Effect<A> =>
  Effect.map(CurrentJournal, (journal) => step(journal ?? autocommit))

/** The `Transactor` port: nested calls join the outer transaction. */
export const layer = Layer.succeed(Transactor)({
  withTransaction: (effect) =>
    Effect.flatMap(CurrentJournal, (outer) => {
      if (outer !== undefined) return effect
      const journal = new Journal()
      return effect.pipe(
        Effect.provideService(CurrentJournal, journal),
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (Exit.isFailure(exit)) for (let i = journal.undo.length - 1; i >= 0; i--) journal.undo[i]!()
            else for (const after of journal.afterCommit) after(autocommit)
          })
        )
      )
    })
})

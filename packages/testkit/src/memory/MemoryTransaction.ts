import { Context, Effect, Exit, Layer } from "effect"
import { Transactor } from "@leadline/core/Transactor"

interface Journal {
  readonly undo: Array<() => void>
  readonly afterCommit: Array<() => void>
}

/**
 * The journal of the running in-memory transaction, if any. Stores record how
 * to reverse each write; a failed transaction replays the undo steps backwards,
 * so the memory wiring keeps the all-or-nothing promise of the SQL one. Work
 * that must only follow a commit (waking the webhook worker) waits in `afterCommit`.
 */
const CurrentJournal = Context.Reference<Journal | undefined>("testkit/MemoryTransaction/Journal", {
  defaultValue: () => undefined
})

/** Records how to undo a write made inside a transaction; outside one, writes are final. */
export const onRollback = (undo: () => void): Effect.Effect<void> =>
  Effect.map(CurrentJournal, (journal) => {
    journal?.undo.push(undo)
  })

/** Runs `effect` once the surrounding transaction commits (at once outside one). */
export const onCommit = (effect: () => void): Effect.Effect<void> =>
  Effect.map(CurrentJournal, (journal) => {
    if (journal === undefined) effect()
    else journal.afterCommit.push(effect)
  })

export const layer = Layer.succeed(Transactor)({
  withTransaction: (effect) =>
    Effect.flatMap(CurrentJournal, (outer) => {
      if (outer !== undefined) return effect
      const journal: Journal = { undo: [], afterCommit: [] }
      return effect.pipe(
        Effect.provideService(CurrentJournal, journal),
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (Exit.isFailure(exit)) for (let i = journal.undo.length - 1; i >= 0; i--) journal.undo[i]!()
            else for (const after of journal.afterCommit) after()
          })
        )
      )
    })
})

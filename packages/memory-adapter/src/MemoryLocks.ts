import { Effect, Semaphore } from "effect"
import { atomically, autocommit, type Tx } from "./MemoryTransaction.ts"

/**
 * Row locks, as SQL's `FOR UPDATE` takes them: a key is held by one transaction until it
 * commits or rolls back, so a read-check-write in a transaction does not race another one
 * doing the same. A transaction that holds a key already goes on; outside a transaction a
 * key is let go at once (it only waits for the transaction holding it).
 */
export interface MemoryLocks {
  readonly lock: (key: string) => Effect.Effect<void>
  /** Every key, in sorted order: two transactions locking overlapping keys never deadlock. */
  readonly lockAll: (keys: Iterable<string>) => Effect.Effect<void>
}

interface Held {
  readonly semaphore: Semaphore.Semaphore
  holder: Tx | undefined
  /** The holder and the fibers waiting: the entry goes when none is left, so keys do not pile up. */
  users: number
}

export const make = (): MemoryLocks => {
  const locks = new Map<string, Held>()

  const leave = (key: string, held: Held) => {
    held.users--
    if (held.users === 0 && locks.get(key) === held) locks.delete(key)
  }

  /** Ties the held key to `tx`: it is let go when the transaction ends, either way (at once under autocommit). */
  const hold = (key: string, held: Held, tx: Tx) => {
    held.holder = tx
    let released = false
    const release = () => {
      if (released) return
      released = true
      held.holder = undefined
      leave(key, held)
      Effect.runSync(held.semaphore.release(1))
    }
    tx.onCommit(release)
    tx.onRollback(release)
  }

  const lock = (key: string): Effect.Effect<void> =>
    // Uninterruptible once the permit is taken, so a taken permit is always tied to its transaction.
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        atomically((tx) => tx),
        (tx) => {
          let held = locks.get(key)
          if (held === undefined) {
            held = { semaphore: Semaphore.makeUnsafe(1), holder: undefined, users: 0 }
            locks.set(key, held)
          }
          if (tx !== autocommit && held.holder === tx) return Effect.void
          const entry = held
          entry.users++
          return restore(entry.semaphore.take(1)).pipe(
            Effect.onInterrupt(() => Effect.sync(() => leave(key, entry))),
            Effect.andThen(Effect.sync(() => hold(key, entry, tx)))
          )
        }
      )
    )

  const lockAll = (keys: Iterable<string>): Effect.Effect<void> =>
    Effect.forEach([...new Set(keys)].sort(), lock, { discard: true })

  return { lock, lockAll }
}

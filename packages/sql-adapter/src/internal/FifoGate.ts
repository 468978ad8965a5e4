import { Effect, type Scope } from "effect"

/**
 * A counting gate that admits strictly in arrival order: a freed permit is handed to the
 * oldest waiter, never left for whoever asks next.
 *
 * Effect's `Pool` and `Semaphore` wake their waiters to try again, so a fiber that arrives
 * while a woken one is still on its way takes the freed connection first, and the woken one
 * queues again at the back. Under a full pool that is what made the slowest requests slow:
 * at 50 connections the first page of leads answered at a p50 of 1 ms and a p99 of 90 ms
 * (docs/performance.md, "A fair pool"). Put in front of the pool with as many permits as
 * it has connections, the gate leaves the pool nothing to be unfair about: whoever passes
 * the gate finds a connection free.
 */
export interface FifoGate {
  /** Holds a permit until the scope closes. */
  readonly scoped: Effect.Effect<void, never, Scope.Scope>
  /** Holds a permit while `effect` runs. */
  readonly withPermit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Permits free and fibers waiting (for tests and diagnostics). */
  readonly state: () => { readonly free: number; readonly waiting: number }
}

interface Waiter {
  readonly resume: (effect: Effect.Effect<void>) => void
  granted: boolean
}

export const make = (permits: number): FifoGate => {
  let free = permits
  // A queue with a moving head: `shift` on a long array copies it on every hand-off.
  let waiters: Array<Waiter | undefined> = []
  let head = 0

  const release = (): void => {
    while (head < waiters.length) {
      const next = waiters[head]
      waiters[head++] = undefined
      if (head > 1024 && head * 2 > waiters.length) {
        waiters = waiters.slice(head)
        head = 0
      }
      if (next !== undefined) {
        next.granted = true
        next.resume(Effect.void)
        return
      }
    }
    free++
  }

  const take: Effect.Effect<void> = Effect.callback<void>((resume) => {
    // A free permit means nobody waits: a release hands its permit on before freeing it.
    if (free > 0) {
      free--
      resume(Effect.void)
      return
    }
    const waiter: Waiter = { resume, granted: false }
    waiters.push(waiter)
    return Effect.sync(() => {
      // Interrupted: a permit already handed over goes on to the next waiter.
      if (waiter.granted) return release()
      const index = waiters.indexOf(waiter, head)
      if (index >= 0) waiters[index] = undefined
    })
  })

  const giveBack = Effect.sync(release)

  return {
    scoped: Effect.uninterruptibleMask((restore) =>
      Effect.andThen(
        restore(take),
        Effect.addFinalizer(() => giveBack)
      )
    ),
    withPermit: (effect) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.andThen(restore(take), Effect.ensuring(restore(effect), giveBack))
      ),
    state: () => ({ free, waiting: waiters.slice(head).filter((waiter) => waiter !== undefined).length })
  }
}

import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Latch } from "effect"
import { Transactor } from "@leadline/core/Transactor"
import * as MemoryLocks from "../src/MemoryLocks.ts"
import * as MemoryTransaction from "../src/MemoryTransaction.ts"

/** Lets every other fiber run as far as it can: a fiber still waiting after this is blocked. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

/**
 * Starts a transaction that takes `keys`, logs `name`, then holds them until `finish` opens
 * and ends with `outcome`. Returns once the keys are held.
 */
const holding = (
  locks: MemoryLocks.MemoryLocks,
  log: Array<string>,
  name: string,
  keys: ReadonlyArray<string>,
  outcome: Effect.Effect<void, string> = Effect.void
) =>
  Effect.gen(function* () {
    const transactor = yield* Transactor
    const held = yield* Latch.make()
    const finish = yield* Latch.make()
    const fiber = yield* Effect.forkChild(
      transactor.withTransaction(
        Effect.gen(function* () {
          yield* locks.lockAll(keys)
          log.push(`${name} holds`)
          yield* held.open
          yield* finish.await
          log.push(`${name} ends`)
          yield* outcome
        })
      )
    )
    yield* held.await
    return { fiber, finish: finish.open }
  })

/** A transaction that takes `key` and logs when it has it; it commits at once. */
const waiting = (locks: MemoryLocks.MemoryLocks, log: Array<string>, name: string, key: string) =>
  Effect.gen(function* () {
    const transactor = yield* Transactor
    return yield* Effect.forkChild(
      transactor.withTransaction(
        Effect.andThen(
          locks.lock(key),
          Effect.sync(() => log.push(`${name} holds`))
        )
      )
    )
  })

describe("MemoryLocks", () => {
  it.effect("makes a second transaction wait for the key until the first commits", () =>
    Effect.gen(function* () {
      const locks = MemoryLocks.make()
      const log: Array<string> = []
      const first = yield* holding(locks, log, "first", ["k"])
      const second = yield* waiting(locks, log, "second", "k")
      // Another key is free meanwhile.
      const other = yield* waiting(locks, log, "other", "j")
      yield* settle
      assert.deepStrictEqual(log, ["first holds", "other holds"])

      yield* first.finish
      yield* Fiber.join(first.fiber)
      yield* Fiber.join(second)
      yield* Fiber.join(other)
      assert.deepStrictEqual(log, ["first holds", "other holds", "first ends", "second holds"])
    }).pipe(Effect.provide(MemoryTransaction.layer))
  )

  it.effect("lets the key go when the holding transaction rolls back", () =>
    Effect.gen(function* () {
      const locks = MemoryLocks.make()
      const log: Array<string> = []
      const first = yield* holding(locks, log, "first", ["k"], Effect.fail("boom"))
      const second = yield* waiting(locks, log, "second", "k")
      yield* settle
      assert.deepStrictEqual(log, ["first holds"])

      yield* first.finish
      assert.deepStrictEqual(yield* Fiber.await(first.fiber), Exit.fail("boom"))
      yield* Fiber.join(second)
      assert.deepStrictEqual(log, ["first holds", "first ends", "second holds"])
    }).pipe(Effect.provide(MemoryTransaction.layer))
  )

  it.effect("is re-entrant within one transaction, and let go once when it ends", () =>
    Effect.gen(function* () {
      const locks = MemoryLocks.make()
      const log: Array<string> = []
      const transactor = yield* Transactor
      yield* transactor.withTransaction(
        Effect.gen(function* () {
          yield* locks.lock("k")
          yield* locks.lock("k")
          // A nested transaction joins the outer one, so it holds the key too.
          yield* transactor.withTransaction(locks.lockAll(["j", "k", "k"]))
          log.push("nested holds")
        })
      )
      assert.deepStrictEqual(log, ["nested holds"])

      // Let go once, not twice: the key still admits one transaction at a time.
      const first = yield* holding(locks, log, "first", ["k", "j"])
      const second = yield* waiting(locks, log, "second", "k")
      const third = yield* waiting(locks, log, "third", "j")
      yield* settle
      assert.deepStrictEqual(log, ["nested holds", "first holds"])
      yield* first.finish
      yield* Fiber.join(first.fiber)
      yield* Fiber.join(second)
      yield* Fiber.join(third)
      assert.sameMembers(log.slice(2), ["first ends", "second holds", "third holds"])
      assert.strictEqual(log[2], "first ends")
    }).pipe(Effect.provide(MemoryTransaction.layer))
  )

  it.effect("outside a transaction lets the key go at once, but waits for a transaction holding it", () =>
    Effect.gen(function* () {
      const locks = MemoryLocks.make()
      const log: Array<string> = []
      yield* locks.lock("k")
      yield* locks.lock("k")
      yield* locks.lockAll(["k", "j"])

      // Free at once: a transaction takes it without waiting.
      const first = yield* holding(locks, log, "first", ["k"])
      const outside = yield* Effect.forkChild(
        Effect.andThen(
          locks.lock("k"),
          Effect.sync(() => log.push("outside holds"))
        )
      )
      yield* settle
      assert.deepStrictEqual(log, ["first holds"])
      yield* first.finish
      yield* Fiber.join(first.fiber)
      yield* Fiber.join(outside)
      assert.deepStrictEqual(log, ["first holds", "first ends", "outside holds"])

      // And the one outside let it go too.
      yield* holding(locks, log, "second", ["k"])
      assert.strictEqual(log.at(-1), "second holds")
    }).pipe(Effect.provide(MemoryTransaction.layer))
  )

  it.effect("takes the keys of lockAll in sorted order, so crossing transactions never deadlock", () =>
    Effect.gen(function* () {
      const locks = MemoryLocks.make()
      const log: Array<string> = []
      const transactor = yield* Transactor
      const first = yield* holding(locks, log, "first", ["b"])
      // Asked for b then a, it takes a and then waits for b, holding a.
      const crossing = yield* Effect.forkChild(
        transactor.withTransaction(
          Effect.andThen(
            locks.lockAll(["b", "a"]),
            Effect.sync(() => log.push("crossing holds"))
          )
        )
      )
      yield* settle
      const third = yield* waiting(locks, log, "third", "a")
      yield* settle
      assert.deepStrictEqual(log, ["first holds"])

      yield* first.finish
      yield* Fiber.join(first.fiber)
      yield* Fiber.join(crossing)
      yield* Fiber.join(third)
      assert.deepStrictEqual(log, ["first holds", "first ends", "crossing holds", "third holds"])
    }).pipe(Effect.provide(MemoryTransaction.layer))
  )

  it.effect("forgets a waiter that is interrupted, and the key still passes on", () =>
    Effect.gen(function* () {
      const locks = MemoryLocks.make()
      const log: Array<string> = []
      const first = yield* holding(locks, log, "first", ["k"])
      const interrupted = yield* waiting(locks, log, "interrupted", "k")
      yield* settle
      yield* Fiber.interrupt(interrupted)
      const third = yield* waiting(locks, log, "third", "k")
      yield* first.finish
      yield* Fiber.join(first.fiber)
      yield* Fiber.join(third)
      assert.deepStrictEqual(log, ["first holds", "first ends", "third holds"])
    }).pipe(Effect.provide(MemoryTransaction.layer))
  )
})

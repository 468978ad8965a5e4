import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import * as FifoGate from "../src/internal/FifoGate.ts"

describe("FifoGate", () => {
  it.effect("admits up to its permits at once and the rest in the order they asked", () =>
    Effect.gen(function* () {
      const gate = FifoGate.make(2)
      const order: Array<string> = []
      const done = yield* Deferred.make<void>()
      const hold = (name: string) =>
        gate.withPermit(
          Effect.andThen(
            Effect.sync(() => order.push(name)),
            Deferred.await(done)
          )
        )
      const fibers = yield* Effect.forEach(["a", "b", "c", "d", "e"], (name) =>
        Effect.tap(Effect.forkChild(hold(name)), () => Effect.yieldNow)
      )
      assert.deepStrictEqual(order, ["a", "b"])
      assert.deepStrictEqual(gate.state(), { free: 0, waiting: 3 })
      yield* Deferred.succeed(done, undefined)
      yield* Fiber.joinAll(fibers)
      assert.deepStrictEqual(order, ["a", "b", "c", "d", "e"])
      assert.deepStrictEqual(gate.state(), { free: 2, waiting: 0 })
    })
  )

  it.effect("hands a freed permit to the oldest waiter, not to whoever asks next", () =>
    Effect.gen(function* () {
      // A request that runs its next statement right after its previous one gave the
      // connection back asks at the very moment the permit is freed: it must queue behind
      // those already waiting (Effect's Semaphore and Pool let it take the permit first).
      const gate = FifoGate.make(1)
      const order: Array<string> = []
      const held = yield* Deferred.make<void>()
      const step = (name: string) => gate.withPermit(Effect.sync(() => order.push(name)))
      const busy = yield* Effect.forkChild(
        Effect.andThen(
          gate.withPermit(
            Effect.andThen(
              Effect.sync(() => order.push("busy:first")),
              Deferred.await(held)
            )
          ),
          step("busy:second")
        )
      )
      yield* Effect.yieldNow
      const waiters = yield* Effect.forEach(["w1", "w2"], (name) =>
        Effect.tap(Effect.forkChild(step(name)), () => Effect.yieldNow)
      )
      yield* Deferred.succeed(held, undefined)
      yield* Fiber.joinAll([busy, ...waiters])
      assert.deepStrictEqual(order, ["busy:first", "w1", "w2", "busy:second"])
    })
  )

  it.effect("forgets a waiter that is interrupted, and a scoped permit is given back when its scope closes", () =>
    Effect.gen(function* () {
      const gate = FifoGate.make(1)
      const held = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(Effect.scoped(Effect.andThen(gate.scoped, Deferred.await(held))))
      yield* Effect.yieldNow
      const impatient = yield* Effect.forkChild(gate.withPermit(Effect.succeed("impatient")))
      const patient = yield* Effect.forkChild(gate.withPermit(Effect.succeed("patient")))
      yield* Effect.yieldNow
      assert.deepStrictEqual(gate.state(), { free: 0, waiting: 2 })
      yield* Fiber.interrupt(impatient)
      assert.deepStrictEqual(gate.state(), { free: 0, waiting: 1 })
      yield* Deferred.succeed(held, undefined)
      yield* Fiber.join(holder)
      assert.strictEqual(yield* Fiber.join(patient), "patient")
      assert.deepStrictEqual(gate.state(), { free: 1, waiting: 0 })
    })
  )

  it.effect("gives the permit back when the work under it fails", () =>
    Effect.gen(function* () {
      const gate = FifoGate.make(1)
      const failed = yield* Effect.flip(gate.withPermit(Effect.fail("no")))
      assert.strictEqual(failed, "no")
      assert.strictEqual(yield* gate.withPermit(Effect.succeed(1)), 1)
      assert.deepStrictEqual(gate.state(), { free: 1, waiting: 0 })
    })
  )
})

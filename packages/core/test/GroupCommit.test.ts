import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import * as GroupCommit from "../src/internal/GroupCommit.ts"

describe("GroupCommit", () => {
  it.effect("runs one caller alone at once, and batches those that arrive while a batch runs", () =>
    Effect.gen(function* () {
      const batches: Array<ReadonlyArray<number>> = []
      const gate = yield* Deferred.make<void>()
      const submit = yield* GroupCommit.make(
        (inputs: ReadonlyArray<number>) =>
          Effect.gen(function* () {
            batches.push(inputs)
            // The first batch holds until the others have queued behind it.
            if (inputs[0] === 0) yield* Deferred.await(gate)
            return inputs.map((n) => n * 10)
          }),
        { maxBatch: 3 }
      )
      const first = yield* Effect.forkChild(submit(0))
      yield* Effect.yieldNow
      const rest = yield* Effect.forkChild(Effect.all([1, 2, 3, 4].map(submit), { concurrency: "unbounded" }))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(first), 0)
      assert.deepStrictEqual(yield* Fiber.join(rest), [10, 20, 30, 40])
      assert.deepStrictEqual(batches, [[0], [1, 2, 3], [4]])
    }).pipe(Effect.scoped)
  )

  it.effect("runs a failed batch again one by one: only the failing caller fails", () =>
    Effect.gen(function* () {
      const batches: Array<ReadonlyArray<string>> = []
      const gate = yield* Deferred.make<void>()
      const submit = yield* GroupCommit.make(
        (inputs: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            batches.push(inputs)
            if (inputs[0] === "first") yield* Deferred.await(gate)
            if (inputs.includes("bad")) return yield* Effect.fail(`refused ${inputs.length}`)
            return inputs.map((s) => s.toUpperCase())
          }),
        { maxBatch: 10 }
      )
      const first = yield* Effect.forkChild(submit("first"))
      yield* Effect.yieldNow
      const others = yield* Effect.forkChild(
        Effect.all(
          ["a", "bad", "b"].map((s) => Effect.exit(submit(s))),
          { concurrency: "unbounded" }
        )
      )
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(first), "FIRST")
      const [a, bad, b] = yield* Fiber.join(others)
      assert.deepStrictEqual(a, Exit.succeed("A"))
      assert.deepStrictEqual(b, Exit.succeed("B"))
      assert.deepStrictEqual(bad, Exit.fail("refused 1"))
      assert.deepStrictEqual(batches, [["first"], ["a", "bad", "b"], ["a"], ["bad"], ["b"]])
    }).pipe(Effect.scoped)
  )
})

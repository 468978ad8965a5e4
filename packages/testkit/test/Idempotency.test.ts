import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { CurrentPrincipal, type Principal } from "@leadline/core/auth/Principal"
import { Idempotency } from "@leadline/core/idempotency/Idempotency"
import * as IdempotencyPurge from "@leadline/core/idempotency/IdempotencyPurge"
import { IdempotencyStore, type StoredResponse } from "@leadline/core/idempotency/IdempotencyStore"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"

const principal = (accountId: string): Principal => ({
  accountId,
  userId: "user",
  ownerUserId: "user",
  role: "owner",
  keyId: "key",
  scopes: []
})

const ok = (body: string): StoredResponse => ({ status: 201, contentType: "application/json", body })

const run = <A, E>(effect: Effect.Effect<A, E, Idempotency | CurrentPrincipal>, accountId = "acc-1") =>
  effect.pipe(Effect.provideService(CurrentPrincipal, principal(accountId)), Effect.provide(MemoryApp.layer))

describe("Idempotency (core rules over the memory store)", () => {
  it.effect("runs once and replays the stored response", () =>
    run(
      Effect.gen(function* () {
        const idempotency = yield* Idempotency
        let runs = 0
        const operation = Effect.sync(() => ok(`{"n":${++runs}}`))
        const first = yield* idempotency.execute("k", "fp", operation)
        const second = yield* idempotency.execute("k", "fp", operation)
        assert.deepStrictEqual(first, { response: ok('{"n":1}'), replayed: false })
        assert.deepStrictEqual(second, { response: ok('{"n":1}'), replayed: true })
        assert.strictEqual(runs, 1)
      })
    )
  )

  it.effect("refuses another fingerprint, and a twin still running", () =>
    run(
      Effect.gen(function* () {
        const idempotency = yield* Idempotency
        yield* idempotency.execute("k", "fp", Effect.succeed(ok("{}")))
        const reused = yield* Effect.flip(idempotency.execute("k", "other", Effect.succeed(ok("{}"))))
        assert.strictEqual(reused._tag, "IdempotencyKeyReused")

        const nested = yield* idempotency.execute(
          "slow",
          "fp",
          Effect.flatMap(Effect.flip(idempotency.execute("slow", "fp", Effect.succeed(ok("{}")))), (error) =>
            Effect.succeed(ok(JSON.stringify({ inner: error._tag })))
          )
        )
        assert.strictEqual(nested.response.body, '{"inner":"IdempotencyInProgress"}')
      })
    )
  )

  it.effect("releases the key after a 5xx or a defect, so a retry runs again", () =>
    run(
      Effect.gen(function* () {
        const idempotency = yield* Idempotency
        const failed = yield* idempotency.execute("k", "fp", Effect.succeed({ ...ok("{}"), status: 503 }))
        assert.strictEqual(failed.replayed, false)
        const died = yield* Effect.exit(idempotency.execute("k", "fp", Effect.die("boom")))
        assert.isTrue(Exit.isFailure(died))
        const retried = yield* idempotency.execute("k", "fp", Effect.succeed(ok('{"third":true}')))
        assert.deepStrictEqual(retried, { response: ok('{"third":true}'), replayed: false })
      })
    )
  )

  it.effect("keeps keys per account", () =>
    Effect.gen(function* () {
      const idempotency = yield* Idempotency
      const a = yield* idempotency
        .execute("k", "fp", Effect.succeed(ok("a")))
        .pipe(Effect.provideService(CurrentPrincipal, principal("a")))
      const b = yield* idempotency
        .execute("k", "fp", Effect.succeed(ok("b")))
        .pipe(Effect.provideService(CurrentPrincipal, principal("b")))
      assert.deepStrictEqual([a.replayed, b.replayed, b.response.body], [false, false, "b"])
    }).pipe(Effect.provide(MemoryApp.layer))
  )

  it.effect("expires a key 24 hours after first use, by the clock", () =>
    run(
      Effect.gen(function* () {
        const idempotency = yield* Idempotency
        yield* idempotency.execute("k", "fp", Effect.succeed(ok("first")))
        yield* TestClock.adjust("23 hours")
        assert.strictEqual((yield* idempotency.execute("k", "fp", Effect.succeed(ok("second")))).replayed, true)
        yield* TestClock.adjust("1 hour")
        const after = yield* idempotency.execute("k", "other", Effect.succeed(ok("third")))
        assert.deepStrictEqual(after, { response: ok("third"), replayed: false })
      })
    )
  )
})

describe("IdempotencyPurge", () => {
  it.effect("deletes records once they expire, on its schedule", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const ref = { accountId: "acc", key: "k" }
      yield* store.reserve(ref, "fp", 0, 24 * 60 * 60 * 1000)
      yield* store.complete(ref, ok("{}"))
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(IdempotencyPurge.layer("1 hour"))
          yield* TestClock.adjust("23 hours")
          assert.strictEqual((yield* store.reserve(ref, "other", 23 * 60 * 60 * 1000, 0))._tag, "Completed")
          yield* TestClock.adjust("2 hours")
        })
      )
      // Purged: the key is free for a new reservation even with a clock before its old expiry.
      assert.strictEqual((yield* store.reserve(ref, "fp", 0, 1))._tag, "Reserved")
    }).pipe(Effect.provide(MemoryApp.layer))
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, PubSub } from "effect"
import { TestClock } from "effect/testing"
import type { ApiKeyGrant } from "../src/auth/ApiKey.ts"
import { ApiKeyCache, TIME_TO_LIVE } from "../src/auth/ApiKeyCache.ts"
import { ApiKeyChanges } from "../src/auth/ApiKeyChanges.ts"

const grant = (scopes: ReadonlyArray<"leads:read" | "leads:write">): ApiKeyGrant => ({
  key: {
    id: "key_1",
    accountId: "acc",
    userId: "u",
    name: "k",
    scopes,
    hash: "h1",
    prefix: "lk_abcdef",
    createdAt: "2026-01-01T00:00:00.000Z",
    revokedAt: null
  },
  role: "owner",
  ownerUserId: "u"
})

/** A cache over a store the test controls, with a change feed it can signal. */
const setup = Effect.gen(function* () {
  const signals = yield* PubSub.unbounded<void>()
  const changes = Layer.succeed(ApiKeyChanges)({
    changes: Effect.map(PubSub.subscribe(signals), (subscription) => Effect.asVoid(PubSub.take(subscription)))
  })
  // Built in the test's scope, so the cache's listener lives as long as the test.
  const cache = Context.get(yield* Layer.build(ApiKeyCache.layer.pipe(Layer.provide(changes))), ApiKeyCache)
  let stored: ApiKeyGrant | undefined = grant(["leads:read"])
  let loads = 0
  const load = Effect.sync(() => {
    loads++
    return stored
  })
  return {
    cache,
    lookup: cache.lookup("h1", load),
    loads: () => loads,
    store: (next: ApiKeyGrant | undefined) => {
      stored = next
    },
    signal: PubSub.publish(signals, undefined)
  }
})

describe("ApiKeyCache", () => {
  it.effect("reads the store once per key until the time to live is over", () =>
    Effect.gen(function* () {
      const t = yield* setup
      assert.deepStrictEqual(yield* t.lookup, grant(["leads:read"]))
      t.store(grant(["leads:write"]))
      assert.deepStrictEqual(yield* t.lookup, grant(["leads:read"]))
      assert.strictEqual(t.loads(), 1)
      yield* TestClock.adjust(TIME_TO_LIVE)
      assert.deepStrictEqual(yield* t.lookup, grant(["leads:write"]))
      assert.strictEqual(t.loads(), 2)
    }).pipe(Effect.scoped)
  )

  it.effect("keeps no unknown key", () =>
    Effect.gen(function* () {
      const t = yield* setup
      t.store(undefined)
      assert.isUndefined(yield* t.lookup)
      assert.isUndefined(yield* t.lookup)
      assert.strictEqual(t.loads(), 2)
    }).pipe(Effect.scoped)
  )

  it.effect("forgets every key on clear and on a change signal", () =>
    Effect.gen(function* () {
      const t = yield* setup
      yield* t.lookup
      yield* t.cache.clear
      yield* t.lookup
      assert.strictEqual(t.loads(), 2)
      t.store(grant(["leads:write"]))
      yield* t.signal
      // The listener runs on its own fiber: wait until it has emptied the cache.
      for (let i = 0; i < 100 && t.loads() === 2; i++) {
        yield* Effect.yieldNow
        yield* t.lookup
      }
      assert.strictEqual(t.loads(), 3)
      assert.deepStrictEqual(yield* t.lookup, grant(["leads:write"]))
    }).pipe(Effect.scoped)
  )

  it.effect("does not keep what a read that began before a clear found", () =>
    Effect.gen(function* () {
      const t = yield* setup
      const reading = yield* Deferred.make<void>()
      const proceed = yield* Deferred.make<void>()
      const slow = Effect.andThen(
        Effect.andThen(Deferred.succeed(reading, undefined), Deferred.await(proceed)),
        Effect.succeed<ApiKeyGrant | undefined>(grant(["leads:read"]))
      )
      const fiber = yield* Effect.forkChild(t.cache.lookup("h1", slow))
      yield* Deferred.await(reading)
      yield* t.cache.clear
      yield* Deferred.succeed(proceed, undefined)
      assert.deepStrictEqual(yield* Fiber.join(fiber), grant(["leads:read"]))
      t.store(grant(["leads:write"]))
      assert.deepStrictEqual(yield* t.lookup, grant(["leads:write"]))
    }).pipe(Effect.scoped)
  )
})

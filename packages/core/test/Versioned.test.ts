import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as Versioned from "../src/Versioned.ts"

describe("Versioned", () => {
  it("lets a write through for no If-Match, *, or a list naming the current tag; never for weak tags", () => {
    assert.strictEqual(Versioned.etag(3), '"3"')
    for (const ifMatch of [undefined, "*", '"3"', '"2", "3"', ' "3" ']) assert.isTrue(Versioned.matches(ifMatch, 3))
    for (const ifMatch of ['"2"', "3", 'W/"3"', '"33"', ""]) assert.isFalse(Versioned.matches(ifMatch, 3), ifMatch)
  })

  it.effect("fails with the current version when If-Match names another", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Versioned.checkIfMatch('"1"', 2))
      assert.strictEqual(error._tag, "PreconditionFailed")
      assert.strictEqual(error.current, 2)
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(Versioned.checkIfMatch('"2"', 2))))
    })
  )

  it("names the old values of exactly the fields that changed, not updated_at or version", () => {
    const before: Record<string, unknown> = {
      status: "pending",
      note: null,
      tags: ["a"],
      version: 1,
      updated_at: "t0",
      shipped_at: null
    }
    const after: Record<string, unknown> = {
      status: "shipped",
      note: null,
      tags: ["a"],
      version: 2,
      updated_at: "t1",
      shipped_at: "t1"
    }
    assert.deepStrictEqual(Versioned.previousAttributes(before, after), { status: "pending", shipped_at: null })
  })

  it("advances the version only when something changed", () => {
    const before = { version: 4, updated_at: "t0", name: "a" }
    assert.strictEqual(Versioned.advance(before, { ...before }, "t1"), before)
    assert.deepStrictEqual(Versioned.advance(before, { ...before, name: "b" }, "t1"), {
      version: 5,
      updated_at: "t1",
      name: "b"
    })
  })
})

import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Pagination from "../src/Pagination.ts"

const decodeQuery = Schema.decodeUnknownOption(Schema.Struct(Pagination.PageQueryFields))

describe("pagination", () => {
  it("computes meta for first, middle, last and past-the-end pages", () => {
    assert.deepStrictEqual(Pagination.meta({ limit: 2, offset: 0 }, 5), {
      limit: 2,
      offset: 0,
      total: 5,
      has_more: true,
      next_offset: 2
    })
    assert.deepStrictEqual(Pagination.meta({ limit: 2, offset: 4 }, 5).next_offset, null)
    assert.deepStrictEqual(Pagination.meta({ limit: 2, offset: 3 }, 5), {
      limit: 2,
      offset: 3,
      total: 5,
      has_more: false,
      next_offset: null
    })
    assert.deepStrictEqual(Pagination.meta({ limit: 50, offset: 99 }, 5).has_more, false)
  })

  it("decodes plain integers in range and defaults the rest", () => {
    const decoded = decodeQuery({ limit: "100", offset: "0" })
    assert.deepStrictEqual(decoded._tag === "Some" ? Pagination.page(decoded.value) : undefined, {
      limit: 100,
      offset: 0
    })
    const empty = decodeQuery({})
    assert.deepStrictEqual(empty._tag === "Some" ? Pagination.page(empty.value) : undefined, { limit: 50, offset: 0 })
  })

  it("refuses rather than clamps values out of range or not integers", () => {
    for (const query of [
      { limit: "0" },
      { limit: "101" },
      { limit: "1.5" },
      { limit: "abc" },
      { limit: " 5" },
      { offset: "-1" }
    ]) {
      assert.strictEqual(decodeQuery(query)._tag, "None", JSON.stringify(query))
    }
  })
})

import { describe, expect, it } from "vitest"
import * as Random from "../src/internal/random.ts"

describe("ulid", () => {
  it("sorts ids of one millisecond in the order they were made, and after the clock steps back", () => {
    const millis = Date.UTC(2026, 10, 24)
    const ids = [
      ...Array.from({ length: 1000 }, () => Random.ulid(millis)),
      Random.ulid(millis - 5),
      Random.ulid(millis + 1)
    ]
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.every((id) => /^[0-9a-z]{26}$/.test(id))).toBe(true)
    // The time part is the millisecond's (and stays there while the clock is behind).
    expect(ids[0]!.slice(0, 10)).toBe(ids[1000]!.slice(0, 10))
    expect(ids[1001]!.slice(0, 10) > ids[0]!.slice(0, 10)).toBe(true)
  })
})

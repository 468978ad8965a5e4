import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { normalize, PhoneNumber } from "../src/leads/Phone.ts"

describe("phone numbers", () => {
  it("normalises international numbers to E.164", () => {
    assert.strictEqual(normalize("+1 415-555 0100"), "+14155550100")
    assert.strictEqual(normalize("+33 6 12 34 56 78"), "+33612345678")
    assert.strictEqual(normalize("+55 (11) 98765-4321"), "+5511987654321")
  })

  it("refuses numbers without a country code, too short, or not numbers", () => {
    for (const input of ["4155550100", "+1 415 555 01", "hello", "", "+", `+1${"4".repeat(70)}`]) {
      assert.strictEqual(normalize(input), undefined, input)
    }
  })

  it("decodes through the schema and encodes back unchanged", () => {
    assert.strictEqual(Schema.decodeUnknownSync(PhoneNumber)("+1 (415) 555-0100"), "+14155550100")
    assert.strictEqual(Schema.encodeSync(PhoneNumber)("+14155550100"), "+14155550100")
  })

  it("answers the same from its memory of recent numbers as from a fresh parse, also past its size", () => {
    const inputs = Array.from({ length: 600 }, (_, i) =>
      i % 3 === 0 ? `+1 415 ${2000000 + i}` : `+1415${2000000 + i}`
    )
    const first = inputs.map(normalize)
    // The first inputs have been evicted by now, the last ones are remembered: both must agree.
    assert.deepStrictEqual(inputs.map(normalize), first)
    assert.strictEqual(first[0], "+14152000000")
    assert.strictEqual(normalize("+1 415 555 01"), undefined)
    assert.strictEqual(normalize("+1 415 555 01"), undefined)
  })
})

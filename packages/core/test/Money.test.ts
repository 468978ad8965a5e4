import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Money from "../src/money/Money.ts"

const decodes = (schema: Schema.Decoder<unknown>, input: unknown) =>
  Schema.decodeUnknownExit(schema)(input)._tag === "Success"

describe("Money", () => {
  it("takes ISO 4217 digits from the maintained table, not Intl (HUF and IDR have 2)", () => {
    assert.deepStrictEqual(["EUR", "JPY", "KWD", "HUF", "IDR", "CLP", "BRL"].map(Money.digitsOf), [2, 0, 3, 2, 2, 0, 2])
    assert.isUndefined(Money.digitsOf("XYZ"))
  })

  it("decodes a currency in any case to upper-case and refuses an unknown one", () => {
    assert.strictEqual(Schema.decodeUnknownSync(Money.Currency)("eur"), "EUR")
    assert.strictEqual(Schema.decodeUnknownSync(Money.Currency)("Kwd"), "KWD")
    for (const bad of ["XYZ", "EURO", "", "€", 978]) assert.isFalse(decodes(Money.Currency, bad), String(bad))
  })

  it("accepts whole minor units from 0 to the maximum, nothing else", () => {
    for (const good of [0, 1, 1290, Money.MAX_AMOUNT]) assert.isTrue(decodes(Money.Amount, good), String(good))
    for (const bad of [9.99, -1, Money.MAX_AMOUNT + 1, Number.NaN, Number.POSITIVE_INFINITY, "1290"]) {
      assert.isFalse(decodes(Money.Amount, bad), String(bad))
    }
  })

  it("converts a decimal price by the currency's digits, rounding half to even on the decimal as written", () => {
    assert.strictEqual(Money.fromDecimal(7.99, "EUR"), 799)
    assert.strictEqual(Money.fromDecimal(0.29, "eur"), 29)
    assert.strictEqual(Money.fromDecimal(7.995, "EUR"), 800)
    assert.strictEqual(Money.fromDecimal(7.985, "EUR"), 798)
    assert.strictEqual(Money.fromDecimal(7.9851, "EUR"), 799)
    assert.strictEqual(Money.fromDecimal(1500, "JPY"), 1500)
    assert.strictEqual(Money.fromDecimal(0.5, "JPY"), 0)
    assert.strictEqual(Money.fromDecimal(1.5, "JPY"), 2)
    assert.strictEqual(Money.fromDecimal(1.2345, "KWD"), 1234)
    assert.strictEqual(Money.fromDecimal(1.2355, "KWD"), 1236)
    assert.strictEqual(Money.fromDecimal(1e-7, "EUR"), 0)
    assert.isUndefined(Money.fromDecimal(1, "XYZ"))
    assert.isUndefined(Money.fromDecimal(-1, "EUR"))
    assert.isUndefined(Money.fromDecimal(1e12, "EUR"))
  })
})

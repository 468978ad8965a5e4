import * as CurrencyCodes from "currency-codes"
import { Schema, SchemaTransformation } from "effect"

/**
 * Money as integer counts of a currency's minor unit (cents for EUR, yen for JPY, fils/1000
 * for KWD), with ISO 4217 codes and digits from the maintained `currency-codes` table, not
 * `Intl`: CLDR gives HUF and IDR 0 digits where ISO says 2 (docs/contract-commerce-ai.md §1).
 */

export const MAX_AMOUNT = 99_999_999_999

const AMOUNT_MESSAGE = `must be a whole number of the currency's minor unit (cents), from 0 to ${MAX_AMOUNT}`

/** An amount in minor units: 1290 is 12.90 BRL. A decimal (9.99) is refused, never rounded. */
export const Amount = Schema.Number.check(
  Schema.makeFilter((n: number) => (Number.isInteger(n) && n >= 0 && n <= MAX_AMOUNT) || AMOUNT_MESSAGE)
).annotate({ description: `An integer count of the currency's minor unit (cents), 0 to ${MAX_AMOUNT}` })

/** The ISO 4217 digits of a known code (upper-case), undefined for an unknown one. */
export const digitsOf = (code: string): number | undefined => CurrencyCodes.code(code)?.digits

export const isCurrency = (code: string): boolean => /^[A-Z]{3}$/.test(code) && digitsOf(code) !== undefined

/** An ISO 4217 code: any case in, upper-case out; an unknown code is refused. */
export const Currency = Schema.String.pipe(
  Schema.decodeTo(
    Schema.String.check(
      Schema.makeFilter((code: string) => isCurrency(code) || "must be an ISO 4217 currency code (EUR, BRL, JPY)")
    ),
    SchemaTransformation.transform({ decode: (code) => code.toUpperCase(), encode: (code) => code })
  )
).annotate({ description: "An ISO 4217 currency code; any case in, upper-case out" })

/** A decimal as a string of digits, without exponent: 1e-7 → "0.0000001". */
const plainDecimal = (value: number): string => {
  const text = String(value)
  return /e/i.test(text) ? value.toFixed(20).replace(/0+$/, "").replace(/\.$/, "") : text
}

/**
 * A decimal price (WhatsApp's `item_price: 7.99`) in minor units, by the currency's ISO digits,
 * rounded half to even on the decimal as written (7.995 EUR → 800, 7.985 → 798), never through
 * a binary multiplication (7.99 × 100 is 799.0000000000001). Undefined for an unknown currency
 * or a value that is negative, not finite or past `MAX_AMOUNT`.
 */
export const fromDecimal = (value: number, currency: string): number | undefined => {
  const digits = digitsOf(currency.toUpperCase())
  if (digits === undefined || !Number.isFinite(value) || value < 0) return undefined
  const [whole = "0", fraction = ""] = plainDecimal(value).split(".")
  const kept = fraction.slice(0, digits).padEnd(digits, "0")
  const rest = fraction.slice(digits)
  let units = Number(whole + kept)
  const half = rest === "" ? -1 : rest[0]! > "5" ? 1 : rest[0]! < "5" ? -1 : /[1-9]/.test(rest.slice(1)) ? 1 : 0
  if (half > 0 || (half === 0 && units % 2 === 1)) units += 1
  return units <= MAX_AMOUNT ? units : undefined
}

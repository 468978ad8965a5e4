import { parsePhoneNumberFromString } from "libphonenumber-js"
import { Schema, SchemaGetter } from "effect"

const MESSAGE = "phone must be an international number with a leading +, e.g. +14155550100"

/** The E.164 form of a valid international number, or undefined. */
export const normalize = (input: string): string | undefined => {
  if (input.length > 64) return undefined
  const parsed = parsePhoneNumberFromString(input)
  return parsed?.isValid() === true && input.trimStart().startsWith("+") ? parsed.number : undefined
}

/** Accepts any spacing or punctuation ("+1 415-555 0100") and decodes to E.164 ("+14155550100"). */
export const PhoneNumber = Schema.String.check(
  Schema.makeFilter((input: string) => normalize(input) !== undefined || MESSAGE, { expected: "a phone number" })
)
  .pipe(
    Schema.decodeTo(Schema.String, {
      decode: SchemaGetter.transform((input: string) => normalize(input)!),
      encode: SchemaGetter.transform((e164: string) => e164)
    })
  )
  .annotate({ description: "International phone number; stored normalised to E.164", examples: ["+14155550100"] })

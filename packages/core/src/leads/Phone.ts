import { parsePhoneNumberFromString } from "libphonenumber-js"
import { Schema, SchemaGetter } from "effect"

const MESSAGE = "phone must be an international number with a leading +, e.g. +14155550100"

const parse = (input: string): string | undefined => {
  if (input.length > 64) return undefined
  const parsed = parsePhoneNumberFromString(input)
  return parsed?.isValid() === true && input.trimStart().startsWith("+") ? parsed.number : undefined
}

// Parsing is the dearest step of a create (about 12 µs), and a number is checked and then
// decoded, over HTTP and again by the core: the last few answers are kept.
const RECENT = 256
const recent = new Map<string, string | undefined>()

const remember = (input: string, e164: string | undefined) => {
  if (recent.size >= RECENT) recent.delete(recent.keys().next().value!)
  recent.set(input, e164)
}

/** The E.164 form of a valid international number, or undefined. */
export const normalize = (input: string): string | undefined => {
  if (recent.has(input)) return recent.get(input)
  const e164 = parse(input)
  remember(input, e164)
  // The core decodes the E.164 form again after HTTP did: it is found too.
  if (e164 !== undefined && e164 !== input) remember(e164, e164)
  return e164
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

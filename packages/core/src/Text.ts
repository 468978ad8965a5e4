import { Schema } from "effect"

/** Why a string cannot be stored, if it cannot. */
const stringProblem = (value: string): string | undefined =>
  value.includes("\u0000")
    ? "must not contain NUL characters"
    : value.isWellFormed()
      ? undefined
      : "must be well-formed Unicode (no lone surrogates)"

/**
 * Strings that can be stored: PostgreSQL text cannot hold NUL, nor JSON a lone
 * surrogate, so either is refused at the door (400) on every store, rather than
 * failing in the database (500).
 */
export const storable = Schema.makeFilter((value: string) => stringProblem(value) ?? true)

export const Text = Schema.String.check(storable)

/** An id in a path or query: any text; one that names nothing is a 404 further in. */
export const Id = Text.annotate({ description: "An identifier" })

const MAX_DEPTH = 32

/** Why a JSON value cannot be stored (nested deeper than `MAX_DEPTH`, or a bad string anywhere); walked without recursion. */
export const jsonProblem = (value: unknown): string | undefined => {
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!
    if (typeof current === "string") {
      const problem = stringProblem(current)
      if (problem !== undefined) return problem
    } else if (typeof current === "object" && current !== null) {
      if (depth >= MAX_DEPTH) return `must not nest deeper than ${MAX_DEPTH} levels`
      for (const [key, child] of Object.entries(current)) {
        const problem = stringProblem(key)
        if (problem !== undefined) return problem
        stack.push([child, depth + 1])
      }
    }
  }
  return undefined
}

/**
 * A JSON object a caller stores as it is (`attributes`, `metadata`): at most `maxBytes` of JSON.
 * One filter, in order: the size check serialises the value, which would overflow the stack on a
 * deeply nested one, so depth (and NUL) are checked first and stop it.
 */
export const JsonObject = (field: string, maxBytes = 16 * 1024) =>
  Schema.Record(Schema.String, Schema.Unknown).check(
    Schema.makeFilter((value: Record<string, unknown>) => {
      const problem = jsonProblem(value)
      if (problem !== undefined) return problem
      return (
        new TextEncoder().encode(JSON.stringify(value)).length <= maxBytes ||
        `${field} must be at most ${maxBytes / 1024} KiB of JSON`
      )
    })
  )

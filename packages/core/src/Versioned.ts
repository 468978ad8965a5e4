import { Effect } from "effect"
import { PreconditionFailed } from "./Errors.ts"

/**
 * Optimistic concurrency for resources with a `version` (products, orders;
 * docs/contract-commerce-ai.md §1): the version starts at 1 and grows by one with every change,
 * reads and writes answer with `ETag: "<version>"`, and a write with `If-Match` applies only to
 * the version it names.
 */

export interface Versioned {
  readonly version: number
  readonly updated_at: string
}

/** The strong entity tag of a version: the representation is a function of it. */
export const etag = (version: number): string => `"${version}"`

/**
 * Whether `If-Match` lets a write to `version` through: absent, `*`, or a list naming its tag.
 * Weak tags (`W/"3"`) never match: If-Match compares strongly (RFC 9110 §13.1.1).
 */
export const matches = (ifMatch: string | undefined, version: number): boolean => {
  if (ifMatch === undefined) return true
  const wanted = etag(version)
  return ifMatch.split(",").some((tag) => {
    const trimmed = tag.trim()
    return trimmed === "*" || trimmed === wanted
  })
}

/** Fails with `PreconditionFailed` when `If-Match` does not let the write through. */
export const checkIfMatch = (ifMatch: string | undefined, version: number): Effect.Effect<void, PreconditionFailed> =>
  matches(ifMatch, version) ? Effect.void : Effect.fail(new PreconditionFailed({ current: version }))

const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b)

/** The old values of exactly the fields that changed, except `updated_at` and `version` (the event's `previous_attributes`). */
export const previousAttributes = <A extends object>(before: A, after: A): Partial<A> => {
  const previous: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(before)) {
    if (field === "updated_at" || field === "version") continue
    if (!same(value, (after as Record<string, unknown>)[field])) previous[field] = value
  }
  return previous as Partial<A>
}

/**
 * `after` as the next version of `before` when a field changed (version + 1, `updated_at` = now),
 * or `before` itself when nothing did: a write that changes nothing is not a new version.
 */
export const advance = <A extends Versioned>(before: A, after: A, now: string): A =>
  Object.keys(previousAttributes(before, after)).length === 0
    ? before
    : { ...after, version: before.version + 1, updated_at: now }

import { Clock, Effect } from "effect"
import * as Random from "./internal/random.ts"

/** Prefixed, time-sortable identifiers (`ld_…`, `evt_…`, `dlv_…`); the time part comes from the Clock. */
export const make = (prefix: string): Effect.Effect<string> =>
  Effect.map(Clock.currentTimeMillis, (millis) => `${prefix}_${Random.ulid(millis)}`)

/** The same id from the wall clock, outside Effect: for request ids, made on every request. */
export const makeUnsafe = (prefix: string): string => `${prefix}_${Random.ulid(Date.now())}`

export const uuid: Effect.Effect<string> = Effect.sync(Random.uuid)

export const now: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (millis) =>
  new Date(millis).toISOString()
)

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"

/** The time an id was made (its ULID's first ten digits), in milliseconds; NaN for a string that is not one of ours. */
export const timeOf = (id: string): number => {
  const ulid = id.slice(id.indexOf("_") + 1)
  let millis = 0
  for (let i = 0; i < 10; i++) {
    const digit = CROCKFORD.indexOf(ulid[i] ?? "")
    if (digit < 0) return Number.NaN
    millis = millis * 32 + digit
  }
  return millis
}

/** A string every id of `prefix` made at or after `millis` sorts above: a lower bound for an index scan. */
export const floorAt = (prefix: string, millis: number): string => {
  let time = ""
  let t = Math.max(0, Math.floor(millis))
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time
    t = Math.floor(t / 32)
  }
  return `${prefix}_${time}`
}

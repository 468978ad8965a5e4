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

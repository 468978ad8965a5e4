import { Effect } from "effect"
import * as Random from "../internal/random.ts"
import * as Sha256 from "../internal/sha256.ts"

/** API keys look like `lk_<43 base64url chars>`: 32 random bytes behind a visible prefix. */
export const PREFIX = "lk_"
const SHAPE = /^lk_[A-Za-z0-9_-]{43}$/

export const isWellFormed = (key: string): boolean => SHAPE.test(key)

export const generate: Effect.Effect<string> = Effect.sync(() => PREFIX + Random.base64url(Random.randomBytes(32)))

/** Keys are stored and looked up only by this hash. */
export const hash = (key: string): Effect.Effect<string> => Sha256.hex(key)

/** The part of a key that may be shown again in listings. */
export const visiblePrefix = (key: string): string => key.slice(0, PREFIX.length + 6)

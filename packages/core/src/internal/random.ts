import { Base64, Base64Url, Hex } from "effect/encoding"

// Web Crypto is a global in every supported runtime, so core needs no platform import for it.
const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"

// Ids are made on every request; one call to the CSPRNG per 4 KiB instead of per id.
const POOL_SIZE = 4096
let pool = new Uint8Array(0)
let offset = 0

export const randomBytes = (length: number): Uint8Array => {
  if (length > POOL_SIZE) return globalThis.crypto.getRandomValues(new Uint8Array(length))
  if (offset + length > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_SIZE))
    offset = 0
  }
  const bytes = pool.slice(offset, offset + length)
  offset += length
  return bytes
}

export const base64url = (bytes: Uint8Array): string => Base64Url.encode(bytes)

export const base64 = (bytes: Uint8Array): string => Base64.encode(bytes)

export const uuid = (): string => globalThis.crypto.randomUUID()

let lastMillis = -1
let lastRandom: Array<number> = []

/**
 * A lower-case ULID: 10 chars of milliseconds then 16 random chars, so ids sort by creation time;
 * monotonic in this process (ULID's monotonic rule): an id made in the same millisecond as the one
 * before, or while the clock stepped back, is that one's random part plus one, so ids made one after
 * another sort in the order they were made, and "newest first" pages have no ties.
 */
/** The smallest ULID of that millisecond: every id made at or after it sorts at or above it. */
export const ulidFloor = (millis: number): string => {
  let time = ""
  let t = millis
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time
    t = Math.floor(t / 32)
  }
  return time + CROCKFORD[0]!.repeat(16)
}

export const ulid = (millis: number): string => {
  if (millis > lastMillis) {
    lastMillis = millis
    const bytes = randomBytes(16)
    lastRandom = Array.from(bytes, (byte) => byte % 32)
  } else {
    let i = lastRandom.length - 1
    while (i >= 0 && lastRandom[i] === 31) lastRandom[i--] = 0
    // 32^16 ids in one millisecond would wrap: move to the next millisecond instead.
    if (i < 0) return ulid(lastMillis + 1)
    lastRandom[i]!++
  }
  let time = ""
  let t = lastMillis
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time
    t = Math.floor(t / 32)
  }
  let rand = ""
  for (const digit of lastRandom) rand += CROCKFORD[digit]
  return time + rand
}

interface NodeCrypto {
  readonly hash: (algorithm: string, data: string, encoding: "hex") => string
}

// On Node, the built-in one-shot `hash` is synchronous and several times faster than Web
// Crypto's promise (it is on every authenticated request); reached without an import
// so that core still runs wherever Web Crypto does.
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined

export const sha256HexSync: ((text: string) => string) | undefined =
  nodeCrypto === undefined ? undefined : (text) => nodeCrypto.hash("sha256", text, "hex")

export const sha256Hex = async (text: string): Promise<string> =>
  Hex.encode(new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))))

/**
 * Meta's `X-Hub-Signature-256` on WhatsApp webhooks: `sha256=` and the hex
 * HMAC-SHA256 of the body bytes, keyed with the app secret. Meta signs the bytes it
 * sends (JSON with escaped unicode), so a receiver must verify the raw bytes, never a
 * re-serialised parse.
 *
 * Synchronous, because the inbound route and the simulator sign and verify inline.
 * The built-in HMAC is reached without an import (as webhooks/Signature does: core
 * imports no `node:` module).
 */

const encoder = new TextEncoder()

interface NodeCrypto {
  readonly createHmac: (
    algorithm: string,
    key: unknown
  ) => { update(data: Uint8Array): { digest(encoding: "hex"): string } }
  readonly createSecretKey: (key: Uint8Array) => unknown
}

const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined

// A deployment signs and verifies with one secret: its key object is made once, not per call.
let lastSecret: string | undefined
let lastKey: unknown

// A hand-written SHA-256 would be the only way to stay synchronous without node:crypto
// (Web Crypto is promise-only); Node, Bun and Deno all have it, so it is required instead.
const hmacHex = (secret: string, data: Uint8Array): string => {
  if (nodeCrypto === undefined) {
    throw new Error("WhatsApp signatures need node:crypto (Node, Bun and Deno provide it)")
  }
  if (secret !== lastSecret) {
    lastKey = nodeCrypto.createSecretKey(encoder.encode(secret))
    lastSecret = secret
  }
  return nodeCrypto.createHmac("sha256", lastKey).update(data).digest("hex")
}

/** Compares two strings in time that depends only on their length. */
const timingSafeEqual = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

const HEADER = /^sha256=[0-9a-fA-F]{64}$/

/** The `X-Hub-Signature-256` value Meta would send with these bytes. */
export const sign = (secret: string, raw: Uint8Array): string => `sha256=${hmacHex(secret, raw)}`

/**
 * Checks an `X-Hub-Signature-256` header against the raw body, in constant time.
 * Anything but `sha256=` and 64 hex digits fails: a missing header, Meta's older
 * `X-Hub-Signature` (`sha1=`) value, a truncated digest.
 */
export const verify = (secret: string, raw: Uint8Array, header: string | undefined | null): boolean => {
  if (typeof header !== "string" || !HEADER.test(header)) return false
  return timingSafeEqual(sign(secret, raw), `sha256=${header.slice(7).toLowerCase()}`)
}

/**
 * Checks the handshake's `hub.verify_token`. Both sides are hashed first so the
 * comparison takes the same time whatever the lengths; an empty expected token
 * matches nothing.
 */
export const verifyToken = (expected: string, given: string | undefined | null): boolean => {
  if (typeof given !== "string" || expected.length === 0) return false
  return timingSafeEqual(
    hmacHex("hub.verify_token", encoder.encode(expected)),
    hmacHex("hub.verify_token", encoder.encode(given))
  )
}

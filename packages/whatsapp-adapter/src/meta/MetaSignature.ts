import { createHash, createHmac, timingSafeEqual } from "node:crypto"

/**
 * Meta's `X-Hub-Signature-256` on WhatsApp webhooks: `sha256=` and the hex
 * HMAC-SHA256 of the body bytes, keyed with the app secret. Meta signs the bytes it
 * sends (JSON with escaped unicode), so a receiver must verify the raw bytes, never a
 * re-serialised parse. Synchronous: the route and the simulator sign and verify inline.
 */

const HEADER = /^sha256=[0-9a-fA-F]{64}$/

const hmac = (secret: string, raw: Uint8Array): Buffer => createHmac("sha256", secret).update(raw).digest()

/** The `X-Hub-Signature-256` value Meta would send with these bytes. */
export const sign = (secret: string, raw: Uint8Array): string => `sha256=${hmac(secret, raw).toString("hex")}`

/**
 * Checks an `X-Hub-Signature-256` header against the raw body, in constant time.
 * Anything but `sha256=` and 64 hex digits fails: a missing header, Meta's older
 * `X-Hub-Signature` (`sha1=`) value, a truncated digest.
 */
export const verify = (secret: string, raw: Uint8Array, header: string | undefined | null): boolean => {
  if (typeof header !== "string" || !HEADER.test(header)) return false
  return timingSafeEqual(hmac(secret, raw), Buffer.from(header.slice(7), "hex"))
}

const digest = (value: string): Buffer => createHash("sha256").update(value).digest()

/**
 * Checks the handshake's `hub.verify_token`. Both sides are hashed first so the
 * comparison takes the same time whatever the lengths; an empty expected token
 * matches nothing.
 */
export const verifyToken = (expected: string, given: string | undefined | null): boolean => {
  if (typeof given !== "string" || expected.length === 0) return false
  return timingSafeEqual(digest(expected), digest(given))
}

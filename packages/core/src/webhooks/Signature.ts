/**
 * Signing and verifying Leadline webhooks. This module imports nothing, and
 * uses only Web Crypto, so a receiver can import it alone
 * (`@leadline/core/webhooks/Signature`) in Node, Deno, Bun or an edge runtime.
 *
 * Two schemes sign every delivery:
 * - `X-Service-Signature`: hex HMAC-SHA256 of the exact body bytes, keyed with the
 *   whole secret string (`whsec_…`) as UTF-8. `X-Service-Timestamp` is not signed by
 *   it; check its freshness separately.
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature:
 *   v1,<base64>`): HMAC-SHA256 of `id.timestamp.body`, keyed with the base64-decoded
 *   part of the secret after `whsec_`. It binds the timestamp.
 */

const encoder = new TextEncoder()

const toBytes = (data: string | Uint8Array): Uint8Array => (typeof data === "string" ? encoder.encode(data) : data)

interface NodeCrypto {
  readonly createHmac: (algorithm: string, key: Uint8Array) => { update(data: Uint8Array): { digest(): Uint8Array } }
}

// On Node the built-in HMAC is synchronous and several times cheaper than Web Crypto's
// promise (the worker signs twice per attempt); reached without an import, so this
// module still runs anywhere Web Crypto does.
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined

const hmac = async (key: Uint8Array, data: Uint8Array): Promise<Uint8Array> => {
  if (nodeCrypto !== undefined) return new Uint8Array(nodeCrypto.createHmac("sha256", key).update(data).digest())
  const cryptoKey = await globalThis.crypto.subtle.importKey(
    "raw",
    key as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"]
  )
  return new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", cryptoKey, data as Uint8Array<ArrayBuffer>))
}

const hex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")

const base64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes))

const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (char) => char.charCodeAt(0))

const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

/** Compares two strings in time that depends only on their length. */
export const timingSafeEqual = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

export const SECRET_PREFIX = "whsec_"

/** The hex `X-Service-Signature` of a body. */
export const sign = async (secret: string, body: string | Uint8Array): Promise<string> =>
  hex(await hmac(encoder.encode(secret), toBytes(body)))

/** The `webhook-signature` value (`v1,<base64>`) of the Standard Webhooks scheme. */
export const signStandard = async (
  secret: string,
  id: string,
  timestamp: number,
  body: string | Uint8Array
): Promise<string> => {
  const key = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret)
  return `v1,${base64(await hmac(key, concat(encoder.encode(`${id}.${timestamp}.`), toBytes(body))))}`
}

export interface VerifyOptions {
  /** The endpoint's secret, as registration returned it (`whsec_…`). */
  readonly secret: string
  /** The raw request body, exactly as received: not re-serialised JSON. */
  readonly body: string | Uint8Array
  /** The `X-Service-Signature` header. */
  readonly signature: string | null | undefined
  /** The `X-Service-Timestamp` header (unix seconds). */
  readonly timestamp: string | null | undefined
  /** How far the timestamp may be from now, in seconds; 300 unless set. */
  readonly toleranceSeconds?: number | undefined
  /** Now, in unix seconds; the system clock unless set. */
  readonly now?: number | undefined
}

export type Verification =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: "missing_header" | "bad_timestamp" | "stale_timestamp" | "bad_signature" }

/**
 * Checks a delivery: the `X-Service-Signature` over the raw body, in constant
 * time, and that `X-Service-Timestamp` is within the tolerance of now.
 */
export const verify = async (options: VerifyOptions): Promise<Verification> => {
  if (!options.signature || !options.timestamp) return { ok: false, reason: "missing_header" }
  if (!/^\d{1,12}$/.test(options.timestamp)) return { ok: false, reason: "bad_timestamp" }
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - Number(options.timestamp)) > (options.toleranceSeconds ?? 300)) {
    return { ok: false, reason: "stale_timestamp" }
  }
  const expected = await sign(options.secret, options.body)
  return timingSafeEqual(expected, options.signature.toLowerCase())
    ? { ok: true }
    : { ok: false, reason: "bad_signature" }
}

/** Checks the Standard Webhooks signature headers (any of the space-separated `v1,` values). */
export const verifyStandard = async (options: {
  readonly secret: string
  readonly body: string | Uint8Array
  readonly id: string | null | undefined
  readonly timestamp: string | null | undefined
  readonly signature: string | null | undefined
  readonly toleranceSeconds?: number | undefined
  readonly now?: number | undefined
}): Promise<Verification> => {
  if (!options.id || !options.timestamp || !options.signature) return { ok: false, reason: "missing_header" }
  if (!/^\d{1,12}$/.test(options.timestamp)) return { ok: false, reason: "bad_timestamp" }
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - Number(options.timestamp)) > (options.toleranceSeconds ?? 300)) {
    return { ok: false, reason: "stale_timestamp" }
  }
  const expected = await signStandard(options.secret, options.id, Number(options.timestamp), options.body)
  const matches = options.signature.split(" ").some((candidate) => timingSafeEqual(candidate, expected))
  return matches ? { ok: true } : { ok: false, reason: "bad_signature" }
}

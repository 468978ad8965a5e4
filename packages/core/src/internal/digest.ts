import { Base64, Hex } from "effect/encoding"

/** An incremental SHA-256: fed piece by piece, so a large file is hashed as it streams. */
export interface Sha256 {
  readonly update: (bytes: Uint8Array) => void
  /** The digest, hex (lower case); call once, after the last update. */
  readonly hex: () => string
}

interface NodeHash {
  update(bytes: Uint8Array): unknown
  digest(encoding: "hex"): string
}

// Reached without an import, as internal/random.ts does, so core still loads where Node is not.
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.("node:crypto") as { readonly createHash: (algorithm: string) => NodeHash } | undefined

/** A fresh hash, or undefined where the runtime has no incremental SHA-256 (Web Crypto has none). */
export const sha256 = (): Sha256 | undefined => {
  if (nodeCrypto === undefined) return undefined
  const hash = nodeCrypto.createHash("sha256")
  return { update: (bytes) => void hash.update(bytes), hex: () => hash.digest("hex") }
}

/**
 * A SHA-256 as hex, from hex or base64 (WhatsApp has sent both), or undefined when it is
 * neither: checksums are compared in one spelling.
 */
export const sha256Hex = (value: string): string | undefined => {
  const trimmed = value.trim()
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return trimmed.toLowerCase()
  const decoded = Base64.decode(trimmed.replace(/-/g, "+").replace(/_/g, "/"))
  return decoded._tag === "Success" && decoded.success.length === 32 ? Hex.encode(decoded.success) : undefined
}

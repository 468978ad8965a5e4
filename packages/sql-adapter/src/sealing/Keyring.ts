import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

/** The setting a keyring is read from; every error about a keyring names it. */
export const SETTING = "LEADLINE_ENCRYPTION_KEY"

const VERSION = "v1"
const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/

/** A setting that is not a keyring: the message says what is wrong, never a key's bytes. */
export class KeyringError extends Error {
  override readonly name = "KeyringError"
}

/** A sealed value that does not open: changed, moved from another row, or sealed under a key not held. */
export class SealedValueError extends Error {
  override readonly name = "SealedValueError"
}

/**
 * Keys by id; the first seals, every one opens. The keys' bytes live in this closure only:
 * the object prints, logs and serialises as its ids.
 */
export interface Keyring {
  readonly ids: ReadonlyArray<string>
  /** The id of the key that seals. */
  readonly current: string
  /** `v1.<keyId>.<iv>.<ciphertext>.<tag>`, base64url; `context` (the row's place) is authenticated, not stored. */
  readonly seal: (context: string, clear: string) => string
  readonly open: (context: string, sealed: string) => string
}

/** The id of the key a sealed value names, or undefined for a value that is not one. */
export const keyIdOf = (value: string): string | undefined => {
  const parts = value.split(".")
  return parts.length === 5 && parts[0] === VERSION && KEY_ID.test(parts[1]!) ? parts[1] : undefined
}

const decodeKey = (id: string, encoded: string, position: number): Uint8Array => {
  const bytes = BASE64.test(encoded)
    ? Buffer.from(encoded, encoded.includes("-") || encoded.includes("_") ? "base64url" : "base64")
    : undefined
  if (bytes === undefined || bytes.length !== KEY_BYTES) {
    throw new KeyringError(
      `${SETTING}: key ${JSON.stringify(id)} (entry ${position}) must be ${KEY_BYTES} bytes in base64 ` +
        `(44 characters; got ${bytes === undefined ? "something that is not base64" : `${bytes.length} bytes`}); ` +
        "make one with `leadline secrets new-key`"
    )
  }
  return bytes
}

/**
 * Reads `id:base64key,id:base64key,…` (the first seals). Throws a `KeyringError` naming the setting
 * for an empty keyring, an entry without an id, a malformed id, a key that is not 32 bytes of base64,
 * or an id given twice.
 */
export const parse = (setting: string): Keyring => {
  const entries = setting
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
  if (entries.length === 0) {
    throw new KeyringError(
      `${SETTING} holds no key; give id:base64key, e.g. the line \`leadline secrets new-key\` prints`
    )
  }
  const keys = new Map<string, Uint8Array>()
  entries.forEach((entry, index) => {
    const position = index + 1
    const colon = entry.indexOf(":")
    if (colon < 0) {
      throw new KeyringError(`${SETTING}: entry ${position} has no key id; write it as id:base64key (e.g. k1:…)`)
    }
    const id = entry.slice(0, colon).trim()
    if (!KEY_ID.test(id)) {
      throw new KeyringError(
        `${SETTING}: entry ${position} has the key id ${JSON.stringify(id.slice(0, 40))}; an id is 1 to 32 letters, digits, - or _`
      )
    }
    if (keys.has(id)) throw new KeyringError(`${SETTING}: the key id ${JSON.stringify(id)} is given twice`)
    keys.set(id, decodeKey(id, entry.slice(colon + 1).trim(), position))
  })
  return make(keys)
}

const make = (keys: ReadonlyMap<string, Uint8Array>): Keyring => {
  const ids = [...keys.keys()]
  const current = ids[0]!
  const sealing = keys.get(current)!
  const keyring: Keyring = {
    ids,
    current,
    seal: (context, clear) => {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv("aes-256-gcm", sealing, iv, { authTagLength: TAG_BYTES })
      cipher.setAAD(Buffer.from(context, "utf8"))
      const ciphertext = Buffer.concat([cipher.update(clear, "utf8"), cipher.final()])
      return [VERSION, current, iv, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
        .join(".")
    },
    open: (context, sealed) => {
      const id = keyIdOf(sealed)
      if (id === undefined) throw new SealedValueError(`The value in ${context} is not a sealed value`)
      const key = keys.get(id)
      if (key === undefined) {
        throw new SealedValueError(
          `The value in ${context} is sealed under the key ${JSON.stringify(id)}, which ${SETTING} does not hold (it holds ${ids.join(", ")})`
        )
      }
      const [, , iv, ciphertext, tag] = sealed.split(".").map((part) => Buffer.from(part, "base64url"))
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv!, { authTagLength: TAG_BYTES })
        decipher.setAAD(Buffer.from(context, "utf8"))
        decipher.setAuthTag(tag!)
        return Buffer.concat([decipher.update(ciphertext!), decipher.final()]).toString("utf8")
      } catch {
        throw new SealedValueError(
          `The value in ${context} does not open under the key ${JSON.stringify(id)}: it was changed, or moved from another row`
        )
      }
    }
  }
  const shown = `Keyring(${ids.join(", ")})`
  return Object.assign(keyring, {
    toString: () => shown,
    toJSON: () => shown,
    [Symbol.for("nodejs.util.inspect.custom")]: () => shown
  })
}

/** A new key as the setting's entry, `id:base64key`, from the system's random source. */
export const newKey = (id: string): string => {
  if (!KEY_ID.test(id))
    throw new KeyringError(`A key id is 1 to 32 letters, digits, - or _ (got ${JSON.stringify(id)})`)
  return `${id}:${randomBytes(KEY_BYTES).toString("base64")}`
}

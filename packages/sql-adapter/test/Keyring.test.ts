import { randomBytes } from "node:crypto"
import { inspect } from "node:util"
import { describe, expect, it } from "vitest"
import * as Keyring from "../src/sealing/Keyring.ts"

const key = (bytes = 32) => randomBytes(bytes).toString("base64")
const k1 = `k1:${key()}`
const k2 = `k2:${key()}`
const CONTEXT = "channels.access_token/0b5a2f9e-1111-4222-8333-944445555666/ch_one"
const TOKEN = "EAAG-a-clear-token-ünïcode"

/** The error `parse` throws for a setting, as the person starting the server reads it. */
const refusal = (setting: string) => {
  try {
    Keyring.parse(setting)
  } catch (error) {
    expect(error).toBeInstanceOf(Keyring.KeyringError)
    return (error as Error).message
  }
  throw new Error(`accepted ${setting}`)
}

describe("a keyring's sealed values", () => {
  it("open to what was sealed, and are v1.<keyId>.<iv>.<ciphertext>.<tag> in base64url", () => {
    const ring = Keyring.parse(k1)
    const sealed = ring.seal(CONTEXT, TOKEN)
    expect(sealed).toMatch(/^v1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/)
    expect(sealed).not.toContain("EAAG")
    expect(Keyring.keyIdOf(sealed)).toBe("k1")
    expect(ring.open(CONTEXT, sealed)).toBe(TOKEN)
    // A fresh IV each time: the same token seals differently.
    expect(ring.seal(CONTEXT, TOKEN)).not.toBe(sealed)
  })

  it("refuse to open after any byte is changed, naming the row and never the value", () => {
    const ring = Keyring.parse(k1)
    const sealed = ring.seal(CONTEXT, TOKEN)
    const parts = sealed.split(".")
    for (const index of [2, 3, 4]) {
      const bytes = Buffer.from(parts[index]!, "base64url")
      bytes[0] = bytes[0]! ^ 1
      const changed = parts.map((part, i) => (i === index ? bytes.toString("base64url") : part)).join(".")
      expect(() => ring.open(CONTEXT, changed)).toThrow(
        `The value in ${CONTEXT} does not open under the key "k1": it was changed, or moved from another row`
      )
    }
  })

  it("refuse to open in another row's context (a value moved from row to row)", () => {
    const ring = Keyring.parse(k1)
    const sealed = ring.seal(CONTEXT, TOKEN)
    const other = CONTEXT.replace("ch_one", "ch_two")
    expect(() => ring.open(other, sealed)).toThrow(Keyring.SealedValueError)
    expect(() => ring.open(other, sealed)).toThrow(/moved from another row/)
  })

  it("open values sealed under an older key of the ring, and seal under the first", () => {
    const old = Keyring.parse(k1).seal(CONTEXT, TOKEN)
    const rotated = Keyring.parse(`${k2},${k1}`)
    expect(rotated.current).toBe("k2")
    expect(rotated.open(CONTEXT, old)).toBe(TOKEN)
    expect(Keyring.keyIdOf(rotated.seal(CONTEXT, TOKEN))).toBe("k2")
    expect(() => Keyring.parse(k2).open(CONTEXT, old)).toThrow(
      `The value in ${CONTEXT} is sealed under the key "k1", which LEADLINE_ENCRYPTION_KEY does not hold (it holds k2)`
    )
  })

  it("refuse a key with a reused id but other bytes", () => {
    const sealed = Keyring.parse(k1).seal(CONTEXT, TOKEN)
    expect(() => Keyring.parse(`k1:${key()}`).open(CONTEXT, sealed)).toThrow(/does not open under the key "k1"/)
  })

  it("print, log and serialise as their ids only", () => {
    const ring = Keyring.parse(`${k2},${k1}`)
    for (const shown of [String(ring), JSON.stringify(ring), inspect(ring), JSON.stringify({ ring })]) {
      expect(shown).toContain("k2, k1")
      expect(shown).not.toContain(k1.slice(3, 20))
      expect(shown).not.toContain(k2.slice(3, 20))
    }
  })
})

describe("LEADLINE_ENCRYPTION_KEY", () => {
  it("takes id:base64 entries, standard or url-safe, with spaces around them", () => {
    const urlSafe = randomBytes(32).toString("base64url")
    expect(Keyring.parse(` k2:${key()} , k1:${urlSafe} `).ids).toEqual(["k2", "k1"])
    expect(Keyring.parse(Keyring.newKey("k20260101")).ids).toEqual(["k20260101"])
  })

  it("refuses a malformed keyring with a message naming the setting, and never the key", () => {
    const short = key(16)
    const cases: Array<[string, string]> = [
      [
        `k1:${short}`,
        'LEADLINE_ENCRYPTION_KEY: key "k1" (entry 1) must be 32 bytes in base64 (44 characters; got 16 bytes); make one with `leadline secrets new-key`'
      ],
      [
        `${k2},k1:not*base64!`,
        'LEADLINE_ENCRYPTION_KEY: key "k1" (entry 2) must be 32 bytes in base64 (44 characters; got something that is not base64); make one with `leadline secrets new-key`'
      ],
      [`${k1},${k1.replace(/:.*/, `:${key()}`)}`, 'LEADLINE_ENCRYPTION_KEY: the key id "k1" is given twice'],
      [key(), "LEADLINE_ENCRYPTION_KEY: entry 1 has no key id; write it as id:base64key (e.g. k1:…)"],
      [
        `key one:${key()}`,
        'LEADLINE_ENCRYPTION_KEY: entry 1 has the key id "key one"; an id is 1 to 32 letters, digits, - or _'
      ],
      [
        " , ",
        "LEADLINE_ENCRYPTION_KEY holds no key; give id:base64key, e.g. the line `leadline secrets new-key` prints"
      ]
    ]
    for (const [setting, message] of cases) {
      const said = refusal(setting)
      expect(said).toBe(message)
      expect(said).not.toContain(short)
    }
  })
})

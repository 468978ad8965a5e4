import { createHmac } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { sign, verify, verifyToken } from "../../src/meta/MetaSignature.ts"

const secret = "test-app-secret"
const body = new TextEncoder().encode('{"object":"whatsapp_business_account","entry":[]}')
const expected = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`

describe("sign", () => {
  it("is sha256= and the lowercase hex HMAC-SHA256 of the bytes, keyed with the app secret", () => {
    assert.strictEqual(sign(secret, body), expected)
    assert.match(sign(secret, body), /^sha256=[0-9a-f]{64}$/)
  })

  it("signs a view into a larger buffer by its own bytes", () => {
    const padded = Buffer.concat([Buffer.from("xx"), body, Buffer.from("yy")])
    assert.strictEqual(sign(secret, padded.subarray(2, padded.length - 2)), expected)
  })
})

describe("verify", () => {
  it("accepts the right header, its hex in upper case too", () => {
    assert.isTrue(verify(secret, body, expected))
    assert.isTrue(verify(secret, body, `sha256=${expected.slice(7).toUpperCase()}`))
  })

  it("rejects a missing, empty, sha1, truncated, padded or mis-prefixed header", () => {
    const sha1 = `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`
    for (const header of [
      undefined,
      null,
      "",
      sha1,
      expected.slice(0, -1),
      `${expected}0`,
      `${expected} `,
      expected.slice(7),
      `SHA256=${expected.slice(7)}`,
      `sha256=${"z".repeat(64)}`
    ]) {
      assert.isFalse(verify(secret, body, header), String(header))
    }
  })

  it("rejects another secret, and one changed byte", () => {
    assert.isFalse(verify(`${secret}x`, body, expected))
    const changed = Uint8Array.from(body)
    changed[10] = changed[10]! ^ 1
    assert.isFalse(verify(secret, changed, expected))
  })
})

describe("verifyToken", () => {
  it("matches only the same token", () => {
    assert.isTrue(verifyToken("tok_123", "tok_123"))
    assert.isFalse(verifyToken("tok_123", "tok_124"))
    assert.isFalse(verifyToken("tok_123", "tok_12"))
    assert.isFalse(verifyToken("tok_123", "tok_1234"))
    assert.isFalse(verifyToken("tok_123", ""))
    assert.isFalse(verifyToken("tok_123", undefined))
    assert.isFalse(verifyToken("tok_123", null))
  })

  it("an empty expected token matches nothing", () => {
    assert.isFalse(verifyToken("", ""))
  })
})

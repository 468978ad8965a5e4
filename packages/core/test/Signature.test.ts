import { createHmac, randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { sign, signStandard, timingSafeEqual, verify, verifyStandard } from "../src/webhooks/Signature.ts"

const secret = `whsec_${randomBytes(32).toString("base64")}`
const body = JSON.stringify({ id: "evt_1", type: "lead.created", data: { name: "Zoë 🚀" } })
const now = 1_750_000_000

describe("sign", () => {
  it("is the hex HMAC-SHA256 of the body keyed with the whole secret string", async () => {
    const expected = createHmac("sha256", secret).update(body).digest("hex")
    assert.strictEqual(await sign(secret, body), expected)
    assert.match(expected, /^[0-9a-f]{64}$/)
  })

  it("signs bytes like the string they encode, also a view into a larger buffer", async () => {
    const expected = await sign(secret, body)
    assert.strictEqual(await sign(secret, new TextEncoder().encode(body)), expected)
    const padded = Buffer.from(`xxx${body}yyy`)
    assert.strictEqual(await sign(secret, padded.subarray(3, padded.length - 3)), expected)
  })

  it("depends on the secret and the body", async () => {
    assert.notStrictEqual(await sign(secret, body), await sign(`${secret}x`, body))
    assert.notStrictEqual(await sign(secret, body), await sign(secret, `${body} `))
  })
})

describe("signStandard", () => {
  it("is v1, and the base64 HMAC of id.timestamp.body keyed with the decoded secret", async () => {
    const key = Buffer.from(secret.slice("whsec_".length), "base64")
    const expected = createHmac("sha256", key).update(`evt_1.${now}.${body}`).digest("base64")
    assert.strictEqual(await signStandard(secret, "evt_1", now, body), `v1,${expected}`)
  })

  it("matches the example in the Standard Webhooks specification", async () => {
    const signature = await signStandard(
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "msg_p5jXN8AQM9LWM0D4loKWxJek",
      1614265330,
      '{"test": 2432232314}'
    )
    assert.strictEqual(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })
})

describe("verify", () => {
  const good = async () => ({
    secret,
    body,
    signature: await sign(secret, body),
    timestamp: String(now),
    now
  })

  it("accepts a good signature, in either letter case", async () => {
    const options = await good()
    assert.deepStrictEqual(await verify(options), { ok: true })
    assert.deepStrictEqual(await verify({ ...options, signature: options.signature.toUpperCase() }), { ok: true })
    assert.deepStrictEqual(await verify({ ...options, body: Buffer.from(body) }), { ok: true })
  })

  it("reports bad_signature for a changed body, another secret or a garbled signature", async () => {
    const options = await good()
    for (const changed of [
      { ...options, body: `${body} ` },
      { ...options, secret: `whsec_${randomBytes(32).toString("base64")}` },
      { ...options, signature: options.signature.slice(0, -1) },
      { ...options, signature: "0".repeat(64) }
    ]) {
      assert.deepStrictEqual(await verify(changed), { ok: false, reason: "bad_signature" })
    }
  })

  it("reports stale_timestamp outside the tolerance, on either side of now", async () => {
    const options = await good()
    assert.deepStrictEqual(await verify({ ...options, now: now + 300 }), { ok: true })
    assert.deepStrictEqual(await verify({ ...options, now: now - 300 }), { ok: true })
    assert.deepStrictEqual(await verify({ ...options, now: now + 301 }), { ok: false, reason: "stale_timestamp" })
    assert.deepStrictEqual(await verify({ ...options, now: now - 301 }), { ok: false, reason: "stale_timestamp" })
    assert.deepStrictEqual(await verify({ ...options, now: now + 61, toleranceSeconds: 60 }), {
      ok: false,
      reason: "stale_timestamp"
    })
  })

  it("uses the system clock unless told otherwise", async () => {
    const timestamp = String(Math.floor(Date.now() / 1000))
    const signature = await sign(secret, body)
    assert.deepStrictEqual(await verify({ secret, body, signature, timestamp }), { ok: true })
    assert.deepStrictEqual(await verify({ secret, body, signature, timestamp: String(now - 86_400) }), {
      ok: false,
      reason: "stale_timestamp"
    })
  })

  it("reports missing_header without a signature or a timestamp", async () => {
    const options = await good()
    for (const changed of [
      { ...options, signature: undefined },
      { ...options, signature: null },
      { ...options, signature: "" },
      { ...options, timestamp: undefined },
      { ...options, timestamp: "" }
    ]) {
      assert.deepStrictEqual(await verify(changed), { ok: false, reason: "missing_header" })
    }
  })

  it("reports bad_timestamp for anything but whole unix seconds", async () => {
    const options = await good()
    for (const timestamp of ["soon", "-1750000000", "1750000000.5", "1.75e9", " 1750000000", "1750000000000000"]) {
      assert.deepStrictEqual(await verify({ ...options, timestamp }), { ok: false, reason: "bad_timestamp" }, timestamp)
    }
  })
})

describe("verifyStandard", () => {
  const good = async () => ({
    secret,
    body,
    id: "evt_1",
    timestamp: String(now),
    signature: await signStandard(secret, "evt_1", now, body),
    now
  })

  it("accepts a good signature, also among several", async () => {
    const options = await good()
    assert.deepStrictEqual(await verifyStandard(options), { ok: true })
    const other = await signStandard(`whsec_${randomBytes(32).toString("base64")}`, "evt_1", now, body)
    assert.deepStrictEqual(await verifyStandard({ ...options, signature: `${other} ${options.signature}` }), {
      ok: true
    })
  })

  it("reports bad_signature when the body, the id or the timestamp changed", async () => {
    const options = await good()
    for (const changed of [
      { ...options, body: `${body} ` },
      { ...options, id: "evt_2" },
      { ...options, timestamp: String(now + 1) },
      { ...options, signature: options.signature.replace("v1,", "v2,") }
    ]) {
      assert.deepStrictEqual(await verifyStandard(changed), { ok: false, reason: "bad_signature" })
    }
  })

  it("reports stale_timestamp outside the tolerance", async () => {
    const options = await good()
    assert.deepStrictEqual(await verifyStandard({ ...options, now: now + 300 }), { ok: true })
    assert.deepStrictEqual(await verifyStandard({ ...options, now: now + 301 }), {
      ok: false,
      reason: "stale_timestamp"
    })
    assert.deepStrictEqual(await verifyStandard({ ...options, now: now - 301 }), {
      ok: false,
      reason: "stale_timestamp"
    })
  })

  it("reports missing_header and bad_timestamp", async () => {
    const options = await good()
    for (const changed of [
      { ...options, id: undefined },
      { ...options, timestamp: null },
      { ...options, signature: "" }
    ]) {
      assert.deepStrictEqual(await verifyStandard(changed), { ok: false, reason: "missing_header" })
    }
    assert.deepStrictEqual(await verifyStandard({ ...options, timestamp: "later" }), {
      ok: false,
      reason: "bad_timestamp"
    })
  })
})

describe("timingSafeEqual", () => {
  it("is true only for the same string", () => {
    assert.isTrue(timingSafeEqual("abc", "abc"))
    assert.isTrue(timingSafeEqual("", ""))
    assert.isFalse(timingSafeEqual("abc", "abd"))
    assert.isFalse(timingSafeEqual("abc", "ab"))
    assert.isFalse(timingSafeEqual("abc", "ABC"))
  })
})

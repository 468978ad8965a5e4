import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import type { Change } from "@leadline/core/whatsapp/InboundBatch"
import {
  banPayload,
  escapeLikeMeta,
  inboundTextPayload,
  qualityUpdatePayload,
  restrictionPayload,
  statusPayload
} from "../../src/meta/MetaPayloads.ts"
import { sign, verify } from "../../src/meta/MetaSignature.ts"
import { MAX_BATCH_ITEMS, type Parsed, parse, type Skipped } from "../../src/meta/MetaWebhook.ts"

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`../../../testkit/fixtures/whatsapp/${name}`, import.meta.url))

const encode = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value))

const changesOf = (parsed: Parsed): { changes: ReadonlyArray<Change>; skipped: ReadonlyArray<Skipped> } => {
  assert.strictEqual(parsed._tag, "Changes")
  if (parsed._tag !== "Changes") throw new Error("unreachable")
  return parsed
}

const onlyChange = (parsed: Parsed): Change => {
  const { changes, skipped } = changesOf(parsed)
  assert.deepStrictEqual(skipped, [])
  assert.strictEqual(changes.length, 1)
  return changes[0]!
}

const secret = "fixture-test-secret"
const wamid = "wamid.HBgLMTYzMTU1NTExODEVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA"

/** A Meta body with one change whose value is the given one. */
const body = (value: Record<string, unknown>): Uint8Array =>
  encode({
    object: "whatsapp_business_account",
    entry: [
      {
        id: "0",
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "16505551111", phone_number_id: "123456123" },
              ...value
            }
          }
        ]
      }
    ]
  })

describe("parse: Meta's examples", () => {
  it("text-message.json: the App Dashboard test payload", () => {
    const change = onlyChange(parse(fixture("text-message.json")))
    assert.strictEqual(change.phoneNumberId, "123456123")
    assert.strictEqual(change.displayPhoneNumber, "16505551111")
    assert.deepStrictEqual(change.statuses, [])
    assert.deepStrictEqual(change.errors, [])
    assert.strictEqual(change.messages.length, 1)
    const message = change.messages[0]!
    assert.strictEqual(message.externalId, "ABGGFlA5Fpa")
    assert.strictEqual(message.from, "16315551181")
    assert.strictEqual(message.profileName, "test user name")
    assert.strictEqual(message.timestamp.toISOString(), "2017-09-08T20:36:28.000Z")
    assert.strictEqual(message.type, "text")
    assert.strictEqual(message.text, "this is a text message")
    assert.isNull(message.media)
    assert.isNull(message.error)
    assert.deepStrictEqual(message.payload, {
      from: "16315551181",
      id: "ABGGFlA5Fpa",
      timestamp: "1504902988",
      type: "text",
      text: { body: "this is a text message" }
    })
  })

  it("image-message.json: caption as text, media metadata kept", () => {
    const message = onlyChange(parse(fixture("image-message.json"))).messages[0]!
    assert.strictEqual(message.type, "image")
    assert.strictEqual(message.text, "Photo of the damaged box")
    assert.deepStrictEqual(message.media, {
      provider_media_id: "1003383421387256",
      mime_type: "image/jpeg",
      sha256: "k9VXxmuW5E+EKYE8lYkVDFEBv3bF0VZZPYPxy6Ka4gA=",
      filename: null
    })
    assert.strictEqual(message.profileName, "test user name")
  })

  it("status-sent.json (v24, no conversation): callback data and recipient", () => {
    const change = onlyChange(parse(fixture("status-sent.json")))
    assert.deepStrictEqual(change.messages, [])
    assert.deepStrictEqual(change.statuses, [
      {
        externalId: wamid,
        status: "sent",
        timestamp: new Date(1750857384 * 1000),
        recipientId: "16315551181",
        callbackData: "msg_01kb2n0c7h5j3k1m9n8p7q6r5s",
        error: null
      }
    ])
  })

  it("status-delivered.json (older shape with conversation) and status-read.json", () => {
    const delivered = onlyChange(parse(fixture("status-delivered.json"))).statuses
    assert.deepStrictEqual(delivered, [
      {
        externalId: wamid,
        status: "delivered",
        timestamp: new Date(1750857386 * 1000),
        recipientId: "16315551181",
        callbackData: null,
        error: null
      }
    ])
    const read = onlyChange(parse(fixture("status-read.json"))).statuses
    assert.strictEqual(read.length, 1)
    assert.strictEqual(read[0]!.status, "read")
    assert.strictEqual(read[0]!.externalId, wamid)
    assert.strictEqual(read[0]!.timestamp.getTime(), 1750857391 * 1000)
  })

  it("status-failed-131047.json: the error from errors[0]", () => {
    const status = onlyChange(parse(fixture("status-failed-131047.json"))).statuses[0]!
    assert.strictEqual(status.status, "failed")
    assert.deepStrictEqual(status.error, {
      code: "provider_error",
      message: "Re-engagement message",
      provider_code: 131047
    })
  })

  it("value-errors-130429.json: errors of the number", () => {
    const change = onlyChange(parse(fixture("value-errors-130429.json")))
    assert.deepStrictEqual(change.messages, [])
    assert.deepStrictEqual(change.statuses, [])
    assert.deepStrictEqual(change.errors, [{ code: 130429, title: "Rate limit hit", message: "Rate limit hit" }])
  })

  it("batch-two-entries.json: every entry and change, in order, nothing dropped", () => {
    const { changes, skipped } = changesOf(parse(fixture("batch-two-entries.json")))
    assert.deepStrictEqual(skipped, [])
    assert.deepStrictEqual(
      changes.map((change) => change.phoneNumberId),
      ["123456123", "123456123", "123456123"]
    )
    const messages = changes.flatMap((change) => change.messages)
    assert.deepStrictEqual(
      messages.map((message) => [message.from, message.profileName, message.text]),
      [
        ["16315551181", "test user name", "first message of the batch"],
        ["16315551182", "second user name", "second message of the batch"],
        ["16315551181", "test user name", "third message, in the second entry"]
      ]
    )
    assert.deepStrictEqual(
      changes.flatMap((change) => change.statuses).map((status) => [status.externalId, status.status]),
      [
        [wamid, "delivered"],
        ["wamid.HBgLMTYzMTU1NTExODEVAgARGBJVTktOT1dOMDAwMDAwMDAwMDAA", "sent"],
        ["wamid.HBgLMTYzMTU1NTExODEVAgARGBJCOEQ3QzZCNUE0OTMyMTBGRUQA", "read"]
      ]
    )
  })
})

describe("escaped-unicode.json: Meta signs its escaped bytes", () => {
  const raw = fixture("escaped-unicode.json")

  it("the escapes are in the file, and parse to the text", () => {
    assert.include(raw.toString("latin1"), String.raw`J'ai mang\u00e9 des p\u00e2tes \/ ok \ud83d\ude00`)
    const message = onlyChange(parse(raw)).messages[0]!
    assert.strictEqual(message.text, "J'ai mangé des pâtes / ok 😀")
    assert.strictEqual(message.profileName, "Renée Dupré")
  })

  it("a signature over the raw bytes verifies; one over re-serialised JSON does not", () => {
    const header = sign(secret, raw)
    assert.isTrue(verify(secret, raw, header))
    const reserialised = new TextEncoder().encode(JSON.stringify(JSON.parse(raw.toString("utf8"))))
    assert.isFalse(verify(secret, reserialised, header))
    assert.notStrictEqual(sign(secret, reserialised), header)
  })

  it("one byte changed fails verification", () => {
    const header = sign(secret, raw)
    const changed = Buffer.from(raw)
    const at = changed.indexOf("mang")
    changed[at] = "M".charCodeAt(0)
    assert.isFalse(verify(secret, changed, header))
  })

  it("every fixture verifies over its own bytes and not after one byte flips", () => {
    for (const name of [
      "text-message.json",
      "image-message.json",
      "status-sent.json",
      "status-delivered.json",
      "status-read.json",
      "status-failed-131047.json",
      "value-errors-130429.json",
      "batch-two-entries.json",
      "escaped-unicode.json"
    ]) {
      const bytes = fixture(name)
      const header = sign(secret, bytes)
      assert.isTrue(verify(secret, bytes, header), name)
      const flipped = Buffer.from(bytes)
      flipped[flipped.length >> 1] = flipped[flipped.length >> 1]! ^ 0x01
      assert.isFalse(verify(secret, flipped, header), name)
    }
  })
})

describe("parse: what it refuses whole, and what it skips", () => {
  it("a body that is not JSON, not a WhatsApp account, or has no entry array", () => {
    const cases: ReadonlyArray<[Uint8Array, string]> = [
      [new TextEncoder().encode("not json"), "not JSON"],
      [new Uint8Array(), "not JSON"],
      [new Uint8Array([0xff, 0xfe, 0x00]), "not JSON"],
      [encode(null), 'object is not "whatsapp_business_account"'],
      [encode([1, 2]), 'object is not "whatsapp_business_account"'],
      [encode({ entry: [] }), 'object is not "whatsapp_business_account"'],
      [encode({ object: "whatsapp_business_account" }), "entry is not an array"],
      [encode({ object: "whatsapp_business_account", entry: {} }), "entry is not an array"]
    ]
    for (const [raw, reason] of cases) assert.deepStrictEqual(parse(raw), { _tag: "Malformed", reason })
  })

  it("Meta's webhook of another product (a Page's) is skipped whole, not refused: Meta would retry it", () => {
    assert.deepStrictEqual(parse(encode({ object: "page", entry: [{ id: "1", changes: [] }] })), {
      _tag: "Changes",
      changes: [],
      health: [],
      skipped: [{ reason: 'a webhook of "page", not WhatsApp\'s', item: { object: "page" } }]
    })
  })

  it("a batch of more than MAX_BATCH_ITEMS entries, changes and items; one at the limit is read", () => {
    const tooMany = `more than ${MAX_BATCH_ITEMS} entries, changes and items in one batch`
    const statuses = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ id: `wamid.${i}`, status: "read", timestamp: "1700000000" }))
    // One entry and one change: the statuses make up the rest.
    const withStatuses = (count: number) =>
      encode({
        object: "whatsapp_business_account",
        entry: [
          {
            id: "1",
            changes: [{ field: "messages", value: { metadata: { phone_number_id: "1" }, statuses: statuses(count) } }]
          }
        ]
      })
    assert.deepStrictEqual(parse(withStatuses(MAX_BATCH_ITEMS - 1)), { _tag: "Malformed", reason: tooMany })
    assert.strictEqual(
      changesOf(parse(withStatuses(MAX_BATCH_ITEMS - 2))).changes[0]!.statuses.length,
      MAX_BATCH_ITEMS - 2
    )
    const emptyEntries = encode({
      object: "whatsapp_business_account",
      entry: Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => ({}))
    })
    assert.deepStrictEqual(parse(emptyEntries), { _tag: "Malformed", reason: tooMany })
    const changes = encode({
      object: "whatsapp_business_account",
      entry: [{ id: "1", changes: Array.from({ length: MAX_BATCH_ITEMS }, () => ({ field: "account_update" })) }]
    })
    assert.deepStrictEqual(parse(changes), { _tag: "Malformed", reason: tooMany })
  })

  it("other fields and changes without a phone number id are skipped, the rest kept", () => {
    const templateChange = { field: "message_template_status_update", value: { event: "APPROVED" } }
    const noMetadata = { field: "messages", value: { messages: [] } }
    const parsed = parse(
      encode({
        object: "whatsapp_business_account",
        entry: [
          { id: "1", changes: [templateChange, noMetadata, "nonsense"] },
          { id: "2" },
          JSON.parse(fixture("text-message.json").toString("utf8")).entry[0]
        ]
      })
    )
    const { changes, skipped } = changesOf(parsed)
    assert.deepStrictEqual(skipped, [
      { reason: 'field "message_template_status_update" is not handled', item: templateChange },
      { reason: "change without value.metadata.phone_number_id", item: noMetadata },
      { reason: "change is not an object", item: "nonsense" },
      { reason: "entry without a changes array", item: { id: "2" } }
    ])
    assert.strictEqual(changes.length, 1)
    assert.strictEqual(changes[0]!.messages[0]!.externalId, "ABGGFlA5Fpa")
  })

  it("malformed messages and statuses are skipped with a reason, good ones around them kept", () => {
    const good = { from: "16315551181", id: "wamid.good1", timestamp: "1750857600", type: "text", text: { body: "hi" } }
    const good2 = { ...good, id: "wamid.good2" }
    const noId = { ...good, id: undefined }
    const noFrom = { ...good, id: "wamid.nofrom", from: undefined }
    const badTime = { ...good, id: "wamid.badtime", timestamp: "yesterday" }
    const longId = { ...good, id: `wamid.${"x".repeat(123)}` }
    const okStatus = { id: "wamid.s1", status: "read", timestamp: "1750857600", recipient_id: "16315551181" }
    const played = { ...okStatus, id: "wamid.s2", status: "played" }
    const noStatus = { ...okStatus, id: "wamid.s3", status: undefined }
    const noStatusTime = { ...okStatus, id: "wamid.s4", timestamp: undefined }
    const okStatus2 = { ...okStatus, id: "wamid.s5", status: "sent" }
    const { changes, skipped } = changesOf(
      parse(
        body({
          messages: [noId, good, noFrom, badTime, 7, longId, good2],
          statuses: [played, okStatus, noStatus, noStatusTime, okStatus2]
        })
      )
    )
    assert.deepStrictEqual(
      changes[0]!.messages.map((message) => message.externalId),
      ["wamid.good1", "wamid.good2"]
    )
    assert.deepStrictEqual(
      changes[0]!.statuses.map((status) => status.externalId),
      ["wamid.s1", "wamid.s5"]
    )
    assert.deepStrictEqual(
      skipped.map((entry) => entry.reason),
      [
        "message missing id",
        "message without from",
        "message without a valid timestamp",
        "message is not an object",
        "message id longer than 128 characters",
        'status "played" is not modelled',
        "status without status",
        "status without a valid timestamp"
      ]
    )
    assert.deepStrictEqual(skipped[3]!.item, 7)
    assert.deepStrictEqual(skipped[4]!.item, longId)
    assert.deepStrictEqual(skipped[5]!.item, played)
  })

  it("a wamid of exactly 128 characters is kept", () => {
    const id = `wamid.${"x".repeat(122)}`
    const change = onlyChange(parse(body({ statuses: [{ id, status: "delivered", timestamp: "1750857600" }] })))
    assert.strictEqual(change.statuses[0]!.externalId, id)
  })
})

describe("parse: what it extracts", () => {
  const item = (extra: Record<string, unknown>) => ({
    from: "16315551181",
    id: "wamid.x",
    timestamp: "1750857600",
    ...extra
  })
  const first = (extra: Record<string, unknown>) => onlyChange(parse(body({ messages: [item(extra)] }))).messages[0]!

  it("text per type, as Chatwoot extracts it", () => {
    assert.strictEqual(first({ type: "video", video: { id: "m1", caption: "clip" } }).text, "clip")
    assert.strictEqual(first({ type: "document", document: { id: "m1", caption: "the pdf" } }).text, "the pdf")
    assert.strictEqual(first({ type: "button", button: { payload: "p", text: "Approve" } }).text, "Approve")
    assert.strictEqual(
      first({ type: "interactive", interactive: { type: "button_reply", button_reply: { id: "b", title: "Yes" } } })
        .text,
      "Yes"
    )
    assert.strictEqual(
      first({ type: "interactive", interactive: { type: "list_reply", list_reply: { id: "l", title: "Row 2" } } }).text,
      "Row 2"
    )
    assert.strictEqual(first({ type: "reaction", reaction: { message_id: "wamid.y", emoji: "👍" } }).text, "👍")
    assert.isNull(first({ type: "audio", audio: { id: "m2", mime_type: "audio/ogg; codecs=opus" } }).text)
    assert.isNull(first({ type: "location", location: { latitude: 1, longitude: 2 } }).text)
  })

  it("media for audio, document (with filename) and sticker; none without an id", () => {
    assert.deepStrictEqual(first({ type: "audio", audio: { id: "m2", mime_type: "audio/ogg" } }).media, {
      provider_media_id: "m2",
      mime_type: "audio/ogg",
      sha256: null,
      filename: null
    })
    assert.deepStrictEqual(
      first({ type: "document", document: { id: "m3", mime_type: "application/pdf", sha256: "h", filename: "a.pdf" } })
        .media,
      { provider_media_id: "m3", mime_type: "application/pdf", sha256: "h", filename: "a.pdf" }
    )
    assert.strictEqual(
      first({ type: "sticker", sticker: { id: "m4", mime_type: "image/webp" } }).media?.provider_media_id,
      "m4"
    )
    assert.isNull(first({ type: "image", image: { caption: "no id" } }).media)
    assert.isNull(first({ type: "text", text: { body: "x" } }).media)
  })

  it("unknown types kept as given, with the payload and the item's error", () => {
    const unsupported = {
      type: "unsupported",
      errors: [
        { code: 131051, title: "Message type unknown", error_data: { details: "Message type is not supported" } }
      ]
    }
    const message = first(unsupported)
    assert.strictEqual(message.type, "unsupported")
    assert.isNull(message.text)
    assert.deepStrictEqual(message.payload, item(unsupported))
    assert.deepStrictEqual(message.error, {
      code: "provider_error",
      message: "Message type unknown",
      provider_code: 131051
    })
    assert.deepStrictEqual(first({ type: "x", errors: [{ error_data: { details: "only details" } }] }).error, {
      code: "provider_error",
      message: "only details",
      provider_code: null
    })
    assert.strictEqual(first({ type: "order_v9", order_v9: { anything: true } }).type, "order_v9")
  })

  it("the profile name comes from the contact whose wa_id is the sender", () => {
    const parsed = parse(
      body({
        contacts: [
          { profile: { name: "someone else" }, wa_id: "16315550000" },
          { profile: { name: "the sender" }, wa_id: "16315551181" }
        ],
        messages: [item({ type: "text", text: { body: "hi" } }), item({ id: "wamid.z", from: "16315559999" })]
      })
    )
    const messages = onlyChange(parsed).messages
    assert.strictEqual(messages[0]!.profileName, "the sender")
    assert.isNull(messages[1]!.profileName)
  })
})

describe("builders", () => {
  const nonAscii = (bytes: Uint8Array): boolean => bytes.some((byte) => byte > 0x7f)

  it("escapeLikeMeta escapes non-ASCII with lowercase hex and the slash", () => {
    assert.strictEqual(
      escapeLikeMeta(JSON.stringify({ body: "J'ai mangé des pâtes / ok 😀", n: "\u00ff\u0100" })),
      String.raw`{"body":"J'ai mang\u00e9 des p\u00e2tes \/ ok \ud83d\ude00","n":"\u00ff\u0100"}`
    )
    const tricky = { s: "a\\/b\u2028\n\u007f" }
    assert.deepStrictEqual(JSON.parse(escapeLikeMeta(JSON.stringify(tricky))), tricky)
  })

  it("inboundTextPayload round-trips through parse, in ASCII bytes", () => {
    const raw = inboundTextPayload({
      phoneNumberId: "123456123",
      displayPhoneNumber: "16505551111",
      from: "33612345678",
      name: "Zoë",
      text: "J'ai mangé des pâtes / ok 😀",
      externalId: "wamid.SIMbXNnXzAx",
      timestamp: new Date("2026-11-23T10:16:40.900Z")
    })
    assert.isFalse(nonAscii(raw))
    const text = new TextDecoder().decode(raw)
    assert.include(text, String.raw`J'ai mang\u00e9 des p\u00e2tes \/ ok \ud83d\ude00`)
    const change = onlyChange(parse(raw))
    assert.strictEqual(change.phoneNumberId, "123456123")
    assert.strictEqual(change.displayPhoneNumber, "16505551111")
    const message = change.messages[0]!
    assert.strictEqual(message.externalId, "wamid.SIMbXNnXzAx")
    assert.strictEqual(message.from, "33612345678")
    assert.strictEqual(message.profileName, "Zoë")
    assert.strictEqual(message.text, "J'ai mangé des pâtes / ok 😀")
    assert.strictEqual(message.type, "text")
    assert.strictEqual(message.timestamp.toISOString(), "2026-11-23T10:16:40.000Z")
    assert.isTrue(verify(secret, raw, sign(secret, raw)))
  })

  it("inboundTextPayload without a name", () => {
    const raw = inboundTextPayload({
      phoneNumberId: "1",
      displayPhoneNumber: "2",
      from: "33612345678",
      name: null,
      text: "hello",
      externalId: "wamid.a",
      timestamp: new Date(0)
    })
    assert.isNull(onlyChange(parse(raw)).messages[0]!.profileName)
  })

  it("statusPayload round-trips each status, with callback data and error", () => {
    for (const status of ["sent", "delivered", "read"] as const) {
      const raw = statusPayload({
        phoneNumberId: "123456123",
        displayPhoneNumber: "16505551111",
        externalId: "wamid.SIMbXNnXzAx",
        status,
        recipientId: "16315551181",
        callbackData: "msg_01kb2n0c7h5j3k1m9n8p7q6r5s",
        timestamp: new Date("2026-11-23T10:16:44.000Z")
      })
      assert.isFalse(nonAscii(raw))
      assert.deepStrictEqual(onlyChange(parse(raw)).statuses, [
        {
          externalId: "wamid.SIMbXNnXzAx",
          status,
          timestamp: new Date("2026-11-23T10:16:44.000Z"),
          recipientId: "16315551181",
          callbackData: "msg_01kb2n0c7h5j3k1m9n8p7q6r5s",
          error: null
        }
      ])
    }
    const failed = statusPayload({
      phoneNumberId: "123456123",
      displayPhoneNumber: "16505551111",
      externalId: "wamid.f",
      status: "failed",
      recipientId: "16315551181",
      callbackData: null,
      timestamp: new Date("2026-11-23T10:16:44.000Z"),
      error: { code: 131026, title: "Message undeliverable", message: "Message undeliverable" }
    })
    assert.isFalse(nonAscii(failed))
    assert.include(new TextDecoder().decode(failed), String.raw`https:\/\/developers.facebook.com`)
    const status = onlyChange(parse(failed)).statuses[0]!
    assert.isNull(status.callbackData)
    assert.deepStrictEqual(status.error, {
      code: "provider_error",
      message: "Message undeliverable",
      provider_code: 131026
    })
    assert.notInclude(new TextDecoder().decode(failed), "biz_opaque_callback_data")
  })
})

describe("parse: Meta's account webhooks about a number's health", () => {
  const healthOf = (parsed: Parsed) => {
    assert.strictEqual(parsed._tag, "Changes")
    if (parsed._tag !== "Changes") throw new Error("unreachable")
    return parsed
  }

  it("phone-number-quality-update.json: flagged is red, the limit kept, routed by the business account", () => {
    const parsed = healthOf(parse(fixture("phone-number-quality-update.json")))
    assert.deepStrictEqual(parsed.changes, [])
    assert.deepStrictEqual(parsed.skipped, [])
    assert.deepStrictEqual(parsed.health, [
      {
        businessAccountId: "102290129340398",
        phoneNumber: "16505551111",
        at: new Date(1731617831 * 1000),
        quality: "red",
        tier: "TIER_10K"
      }
    ])
  })

  it("account-update-restriction.json: the restriction and its end", () => {
    const parsed = healthOf(parse(fixture("account-update-restriction.json")))
    assert.deepStrictEqual(parsed.skipped, [])
    assert.deepStrictEqual(parsed.health, [
      {
        businessAccountId: "102290129340398",
        phoneNumber: "16505551111",
        at: new Date(1731617831 * 1000),
        restrictions: [{ type: "RESTRICTED_BIZ_INITIATED_MESSAGING", until: new Date(1731704231 * 1000) }]
      }
    ])
  })

  it("unflagged, a lifted restriction, a ban and a reinstatement, as the payload builders write them", () => {
    const at = new Date("2026-11-28T10:00:00Z")
    const read = (raw: Uint8Array) => healthOf(parse(raw)).health
    assert.deepStrictEqual(
      read(
        qualityUpdatePayload({
          businessAccountId: "7",
          displayPhoneNumber: "+1 650-555-1111",
          event: "UNFLAGGED",
          currentLimit: "TIER_1K",
          at
        })
      ),
      [{ businessAccountId: "7", phoneNumber: "16505551111", at, quality: "yellow", tier: "TIER_1K" }]
    )
    assert.deepStrictEqual(
      read(restrictionPayload({ businessAccountId: "7", phoneNumber: "16505551111", restrictions: [], at })),
      [{ businessAccountId: "7", phoneNumber: "16505551111", at, restrictions: [] }]
    )
    assert.deepStrictEqual(read(banPayload({ businessAccountId: "7", state: "DISABLE", at })), [
      { businessAccountId: "7", phoneNumber: null, at, disabled: true }
    ])
    assert.deepStrictEqual(read(banPayload({ businessAccountId: "7", state: "REINSTATE", at })), [
      { businessAccountId: "7", phoneNumber: null, at, disabled: false }
    ])
  })

  it("skips what says nothing of health, and a quality update without its number, keeping the rest", () => {
    const parsed = healthOf(
      parse(
        encode({
          object: "whatsapp_business_account",
          entry: [
            {
              id: "7",
              time: 1731617831,
              changes: [
                { field: "account_update", value: { event: "PARTNER_ADDED" } },
                { field: "phone_number_quality_update", value: { event: "FLAGGED" } },
                {
                  field: "account_update",
                  value: { event: "DISABLED_UPDATE", ban_info: { waba_ban_state: ["SCHEDULE_FOR_DISABLE"] } }
                },
                {
                  field: "phone_number_quality_update",
                  value: { display_phone_number: "1", event: "UPGRADE", current_limit: "TIER_100K" }
                }
              ]
            }
          ]
        })
      )
    )
    assert.deepStrictEqual(
      parsed.skipped.map((s) => s.reason),
      [
        'account_update event "PARTNER_ADDED" is not modelled',
        "phone_number_quality_update without display_phone_number",
        'account_update DISABLED_UPDATE with waba_ban_state "SCHEDULE_FOR_DISABLE" is not modelled'
      ]
    )
    assert.deepStrictEqual(parsed.health, [
      { businessAccountId: "7", phoneNumber: "1", at: new Date(1731617831 * 1000), tier: "TIER_100K" }
    ])
  })
})

import { assert, describe, it } from "@effect/vitest"
import * as MetaTemplateWebhook from "../../src/meta/MetaTemplateWebhook.ts"
import * as MetaWebhook from "../../src/meta/MetaWebhook.ts"

const encode = (body: unknown) => new TextEncoder().encode(JSON.stringify(body))

/** Meta's documented shape: the WABA in `entry[].id`, a numeric template id. */
const webhook = (changes: ReadonlyArray<unknown>, waba: unknown = "102290129340398") =>
  encode({ object: "whatsapp_business_account", entry: [{ id: waba, time: 1732780800, changes }] })

const status = (event: string, reason?: string) => ({
  field: "message_template_status_update",
  value: {
    event,
    message_template_id: 594425479261596,
    message_template_name: "order_update",
    message_template_language: "en_US",
    ...(reason === undefined ? {} : { reason })
  }
})

/** What every update names: the WABA, Meta's id, and the name and language. */
const template = {
  businessAccountId: "102290129340398",
  externalId: "594425479261596",
  name: "order_update",
  language: "en_US"
}

describe("MetaTemplateWebhook.parse", () => {
  it("reads status, quality and category changes of a WABA's templates, in order", () => {
    const updates = MetaTemplateWebhook.parse(
      webhook([
        status("REJECTED", "INVALID_FORMAT"),
        {
          field: "message_template_quality_update",
          value: {
            previous_quality_score: "GREEN",
            new_quality_score: "YELLOW",
            message_template_id: 594425479261596,
            message_template_name: "order_update",
            message_template_language: "en_US"
          }
        },
        {
          field: "template_category_update",
          value: {
            message_template_id: "594425479261596",
            message_template_name: "order_update",
            message_template_language: "en_US",
            previous_category: "UTILITY",
            new_category: "MARKETING"
          }
        }
      ])
    )
    assert.deepStrictEqual(updates, [
      {
        status: "REJECTED",
        rejectedReason: "INVALID_FORMAT",
        ...template
      },
      { quality: "YELLOW", ...template },
      { category: "MARKETING", ...template }
    ])
  })

  it("REINSTATED is APPROVED again, FLAGGED moves only the quality, NONE is no reason", () => {
    const updates = MetaTemplateWebhook.parse(
      webhook([status("REINSTATED"), status("FLAGGED"), status("PAUSED", "NONE"), status("APPROVED", "NONE")])
    )
    assert.deepStrictEqual(
      updates.map(({ status, quality, rejectedReason }) => ({ status, quality, rejectedReason })),
      [
        { status: "APPROVED", quality: undefined, rejectedReason: null },
        { status: undefined, quality: "RED", rejectedReason: undefined },
        { status: "PAUSED", quality: undefined, rejectedReason: null },
        { status: "APPROVED", quality: undefined, rejectedReason: null }
      ]
    )
  })

  it("leaves out what it cannot use, and reads nothing from a message webhook or a body that is not Meta's", () => {
    assert.deepStrictEqual(
      MetaTemplateWebhook.parse(
        webhook([
          { field: "message_template_status_update", value: { event: "APPROVED" } },
          { field: "message_template_status_update", value: { event: "approved; drop table", message_template_id: 1 } },
          { field: "message_template_quality_update", value: { message_template_id: 1 } },
          { field: "messages", value: { metadata: { phone_number_id: "1" } } }
        ])
      ),
      []
    )
    assert.deepStrictEqual(MetaTemplateWebhook.parse(webhook([status("APPROVED")], null)), [])
    assert.deepStrictEqual(MetaTemplateWebhook.parse(new TextEncoder().encode("not json")), [])
    assert.deepStrictEqual(MetaTemplateWebhook.parse(encode({ object: "page", entry: [] })), [])
  })

  it("reads back what templatesPayload writes, and the message parser skips those changes", () => {
    const raw = MetaTemplateWebhook.templatesPayload(
      "102290129340398",
      [
        {
          field: "message_template_status_update",
          event: "APPROVED",
          externalId: "1001",
          name: "order_update",
          language: "en_US"
        }
      ],
      new Date(0)
    )
    assert.deepStrictEqual(MetaTemplateWebhook.parse(raw), [
      {
        status: "APPROVED",
        rejectedReason: null,
        businessAccountId: "102290129340398",
        externalId: "1001",
        name: "order_update",
        language: "en_US"
      }
    ])
    const parsed = MetaWebhook.parse(raw)
    assert.strictEqual(parsed._tag, "Changes")
    if (parsed._tag === "Changes") {
      assert.deepStrictEqual(parsed.changes, [])
      assert.isTrue(parsed.skipped.every((item) => MetaTemplateWebhook.isTemplateChange(item.item)))
    }
  })
})

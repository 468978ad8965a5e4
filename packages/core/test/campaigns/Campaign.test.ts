import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { CreateCampaign } from "../../src/campaigns/Campaign.ts"
import { decodeInput } from "../../src/Errors.ts"

const decode = decodeInput(CreateCampaign, "campaign")
const valid = {
  name: "November restock",
  template: {
    name: "restock_alert",
    language: "en_US",
    components: [{ type: "body", parameters: [{ type: "text", text: "{{lead.name}}" }] }]
  },
  audience: { tags: ["vip"], statuses: ["new", "contacted"], lead_ids: [], exclude_tags: ["opted-out"] }
}
const problems = (input: unknown) =>
  Effect.runSync(
    Effect.result(decode(input)).pipe(
      Effect.map((result) => (Result.isFailure(result) ? result.failure.details : "decoded"))
    )
  )

describe("CreateCampaign (docs/contract-messaging.md §8.1, §8.3)", () => {
  it("takes the contract's example, with scheduled_at optional", () => {
    assert.strictEqual(problems(valid), "decoded")
    assert.strictEqual(problems({ ...valid, scheduled_at: "2026-12-01T09:00:00Z", channel_id: null }), "decoded")
  })

  it("names an unknown placeholder, an audience of nobody, a bad time, too many ids and an unknown status", () => {
    const body = (text: string) => ({
      ...valid.template,
      components: [{ type: "body", parameters: [{ type: "text", text }] }]
    })
    const cases: ReadonlyArray<readonly [unknown, string, string]> = [
      [
        { ...valid, template: body("Hi {{lead.nmae}}") },
        "template",
        "unknown placeholder {{lead.nmae}}: use {{lead.name}}, {{lead.phone}}, {{lead.email}} or {{lead.attributes.KEY}}"
      ],
      [
        { ...valid, audience: { tags: [], statuses: [], lead_ids: [], exclude_tags: ["opted-out"] } },
        "audience",
        "audience must name tags, statuses or lead_ids: an audience of nobody would be everybody"
      ],
      [{ ...valid, scheduled_at: "next tuesday" }, "scheduled_at", "scheduled_at must be an ISO 8601 time"],
      [
        { ...valid, audience: { ...valid.audience, lead_ids: Array.from({ length: 1001 }, (_, i) => `ld_${i}`) } },
        "audience.lead_ids",
        "at most 1000 lead ids"
      ]
    ]
    for (const [input, path, message] of cases) assert.deepStrictEqual(problems(input), [{ path, message }], path)
    const status = problems({ ...valid, audience: { ...valid.audience, statuses: ["hot"] } })
    assert.deepStrictEqual(
      (status as ReadonlyArray<{ path: string }>).map((detail) => detail.path),
      ["audience.statuses.0"]
    )
  })
})

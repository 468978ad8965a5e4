import { assert, describe, it } from "@effect/vitest"
import { type Audience, isUnbounded, matches } from "../../src/leads/Audience.ts"

const none: Audience = { tags: [], statuses: [], lead_ids: [], exclude_tags: [] }
const lead = (id: string, tags: ReadonlyArray<string>, status: "new" | "contacted" | "won" = "new") => ({
  id,
  tags,
  status
})
const leads = [
  lead("ld_vip_new", ["vip"], "new"),
  lead("ld_vip_won", ["vip", "2025"], "won"),
  lead("ld_news", ["newsletter"], "contacted"),
  lead("ld_vip_out", ["vip", "opted-out"], "new"),
  lead("ld_plain", [], "new")
]
const chosen = (audience: Audience) => leads.filter((l) => matches(audience, l)).map((l) => l.id)

describe("a campaign's audience (docs/contract-messaging.md §8.1)", () => {
  it("takes leads with any of the tags", () => {
    assert.deepStrictEqual(chosen({ ...none, tags: ["vip", "newsletter"] }), [
      "ld_vip_new",
      "ld_vip_won",
      "ld_news",
      "ld_vip_out"
    ])
  })

  it("narrows tags by status when statuses are given, and takes a status alone", () => {
    assert.deepStrictEqual(chosen({ ...none, tags: ["vip"], statuses: ["new"] }), ["ld_vip_new", "ld_vip_out"])
    assert.deepStrictEqual(chosen({ ...none, statuses: ["contacted", "won"] }), ["ld_vip_won", "ld_news"])
  })

  it("adds named leads whatever their tags, and excludes by tag last, named leads included", () => {
    assert.deepStrictEqual(chosen({ ...none, tags: ["newsletter"], lead_ids: ["ld_plain"] }), ["ld_news", "ld_plain"])
    assert.deepStrictEqual(
      chosen({ ...none, tags: ["vip"], lead_ids: ["ld_vip_out"], exclude_tags: ["opted-out", "2025"] }),
      ["ld_vip_new"]
    )
  })

  it("refuses an audience that names nobody: it would be everybody", () => {
    assert.isTrue(isUnbounded(none))
    assert.isTrue(isUnbounded({ ...none, exclude_tags: ["opted-out"] }))
    assert.isFalse(isUnbounded({ ...none, lead_ids: ["ld_plain"] }))
    assert.deepStrictEqual(chosen({ ...none, exclude_tags: ["opted-out"] }), [])
  })
})

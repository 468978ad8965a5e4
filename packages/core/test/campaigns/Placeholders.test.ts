import { assert, describe, it } from "@effect/vitest"
import { render, unknown } from "../../src/campaigns/Placeholders.ts"

const ada = { name: "Ada Souza", phone: "+5511987654321", email: null, attributes: { city: "Recife", visits: 3 } }
const body = (...texts: ReadonlyArray<string>) => [
  { type: "body", parameters: texts.map((text) => ({ type: "text", text })) }
]

describe("campaign placeholders (docs/contract-messaging.md §8.1)", () => {
  it("names what is not a known placeholder, each once, and accepts the known ones with spaces inside", () => {
    assert.deepStrictEqual(unknown(body("{{lead.name}}", "{{ lead.attributes.city }}", "{{lead.phone}}")), [])
    assert.deepStrictEqual(unknown(body("{{lead.nmae}}", "Hi {{contact.name}} and {{lead.nmae}}", "{{}}")), [
      "{{lead.nmae}}",
      "{{contact.name}}",
      "{{}}"
    ])
    assert.deepStrictEqual(
      unknown([{ type: "header", parameters: [{ type: "text", text: "{{lead.attributes.}}" }] }]),
      ["{{lead.attributes.}}"]
    )
  })

  it("renders each string of the components for a lead, leaving the rest of the structure as it was", () => {
    const rendered = render(body("{{lead.name}}", "{{lead.attributes.city}} ({{lead.attributes.visits}})"), ada)
    assert.deepStrictEqual(rendered, {
      _tag: "Rendered",
      components: body("Ada Souza", "Recife (3)")
    })
  })

  it("reports the first placeholder that renders empty: the recipient is skipped, Meta refuses empty parameters", () => {
    assert.deepStrictEqual(render(body("{{lead.name}}", "{{lead.email}}"), ada), {
      _tag: "Missing",
      placeholder: "{{lead.email}}"
    })
    assert.deepStrictEqual(render(body("{{lead.attributes.plan}}"), ada), {
      _tag: "Missing",
      placeholder: "{{lead.attributes.plan}}"
    })
  })
})

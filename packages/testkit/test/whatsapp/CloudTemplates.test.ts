import type { BusinessAccount } from "@leadline/core/templates/TemplateGraph"
import { TemplateGraph } from "@leadline/core/templates/TemplateGraph"
import * as CloudTemplates from "@leadline/whatsapp-adapter/cloud/CloudTemplates"
import { Effect, Redacted, Result } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as MockGraph from "../../src/whatsapp/MockGraph.ts"
import * as MockGraphTemplates from "../../src/whatsapp/MockGraphTemplates.ts"

const TOKEN = "EAAG-template-token-41c2"
const WABA = "102290129340398"
const account: BusinessAccount = { businessAccountId: WABA, accessToken: Redacted.make(TOKEN) }

let mock: MockGraph.MockGraph

beforeEach(async () => {
  mock = await MockGraph.start()
})
afterEach(async () => {
  await mock.close()
})

const run = <A, E>(use: (graph: TemplateGraph["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.result(Effect.flatMap(Effect.service(TemplateGraph), use)).pipe(
      Effect.provide(CloudTemplates.layer({ baseUrl: mock.url }))
    )
  )

const fieldsOf = (error: { _tag: string; providerCode: number | null; message: string }) => ({
  _tag: error._tag,
  providerCode: error.providerCode,
  message: error.message
})

const FIELDS = "name,language,status,category,components,quality_score,rejected_reason,id"

describe("CloudTemplates: the list", () => {
  it("GETs every page of the WABA's templates with the token, the fields and the cursor", async () => {
    mock.script(
      MockGraphTemplates.listPage(
        mock.url,
        [
          MockGraphTemplates.template({ id: "1001", name: "order_update" }),
          MockGraphTemplates.template({ id: "1002", name: "order_update", language: "es", status: "PAUSED" })
        ],
        "QVFIUjJ"
      ),
      MockGraphTemplates.listPage(mock.url, [
        MockGraphTemplates.template({
          id: "1003",
          name: "spring_offer",
          category: "MARKETING",
          status: "REJECTED",
          rejected_reason: "INVALID_FORMAT",
          quality_score: { score: "UNKNOWN" }
        }),
        { id: "1004", language: "en" } as never
      ])
    )
    const result = await run((graph) => graph.list(account))

    const requests = mock.requests()
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /v24.0/${WABA}/message_templates`,
      `GET /v24.0/${WABA}/message_templates`
    ])
    expect(requests.map((r) => r.query)).toEqual([
      { fields: FIELDS, limit: "100" },
      { fields: FIELDS, limit: "100", after: "QVFIUjJ" }
    ])
    expect(requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true)
    expect(result).toEqual(
      Result.succeed([
        {
          externalId: "1001",
          name: "order_update",
          language: "en_US",
          category: "UTILITY",
          status: "APPROVED",
          quality: "GREEN",
          rejectedReason: null,
          components: [{ type: "BODY", text: "Hi {{1}}", example: { body_text: [["Ada"]] } }]
        },
        expect.objectContaining({ externalId: "1002", language: "es", status: "PAUSED" }),
        expect.objectContaining({
          externalId: "1003",
          category: "MARKETING",
          status: "REJECTED",
          quality: "UNKNOWN",
          rejectedReason: "INVALID_FORMAT"
        })
      ])
    )
  })

  it("a Graph error is a TemplateGraphError with Graph's code and message", async () => {
    mock.script(MockGraph.Reply.graphError(401, 190, { message: "Error validating access token" }))
    const result = await run((graph) => graph.list(account))
    expect(Result.isFailure(result) && fieldsOf(result.failure)).toEqual({
      _tag: "TemplateGraphError",
      providerCode: 190,
      message: "Error validating access token"
    })
    expect(mock.requests()).toHaveLength(1)
  })

  it("an answer that is not JSON is a TemplateGraphError, never a list", async () => {
    mock.script(MockGraph.Reply.html(502))
    const result = await run((graph) => graph.list(account))
    expect(Result.isFailure(result) && result.failure.message).toBe("HTTP 502 with a body that is not JSON")
  })
})

describe("CloudTemplates: create and delete", () => {
  const components = [
    { type: "HEADER", format: "TEXT", text: "Order {{1}}", example: { header_text: ["A-1"] } },
    { type: "BODY", text: "Hi {{1}}", example: { body_text: [["Ada"]] } }
  ]

  it("POSTs Meta's create body and answers Meta's id, status and category", async () => {
    mock.script(MockGraphTemplates.created("594425479261596", "PENDING", "MARKETING"))
    const result = await run((graph) =>
      graph.create(account, { name: "order_update", language: "en_US", category: "UTILITY", components })
    )
    const [request] = mock.requests()
    expect(`${request!.method} ${request!.path}`).toBe(`POST /v24.0/${WABA}/message_templates`)
    expect(request!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(request!.headers["content-type"]).toBe("application/json")
    expect(request!.body).toEqual({ name: "order_update", language: "en_US", category: "UTILITY", components })
    expect(result).toEqual(Result.succeed({ externalId: "594425479261596", status: "PENDING", category: "MARKETING" }))
  })

  it("Meta refusing a create is Graph's code and message", async () => {
    mock.script(
      MockGraph.Reply.graphError(400, 100, {
        subcode: 2388024,
        message: "Content in this language already exists"
      })
    )
    const result = await run((graph) =>
      graph.create(account, { name: "order_update", language: "en_US", category: "UTILITY", components })
    )
    expect(Result.isFailure(result) && fieldsOf(result.failure)).toEqual({
      _tag: "TemplateGraphError",
      providerCode: 100,
      message: "Content in this language already exists"
    })
  })

  it("DELETEs one language by name and hsm_id", async () => {
    mock.script(MockGraphTemplates.deleted())
    const result = await run((graph) => graph.remove(account, { name: "order_update", externalId: "1001" }))
    const [request] = mock.requests()
    expect(`${request!.method} ${request!.path}`).toBe(`DELETE /v24.0/${WABA}/message_templates`)
    expect(request!.query).toEqual({ name: "order_update", hsm_id: "1001" })
    expect(request!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(result).toEqual(Result.succeed(undefined))
  })
})

import * as CloudTemplates from "@leadline/whatsapp-adapter/cloud/CloudTemplates"
import * as MetaTemplateWebhook from "@leadline/whatsapp-adapter/meta/MetaTemplateWebhook"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { createChannel } from "../src/channels/ChannelsResource.ts"
import { postWebhook } from "../src/conversations/ConversationsResource.ts"
import { makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { nextBusinessAccountId, templateBody } from "../src/templates/TemplatesResource.ts"
import * as TestServer from "../src/TestServer.ts"
import * as MockGraph from "../src/whatsapp/MockGraph.ts"
import * as MockGraphTemplates from "../src/whatsapp/MockGraphTemplates.ts"

const FIELDS = "name,language,status,category,components,quality_score,rejected_reason,id"

describe("templates through the Cloud API, against a mock Graph server", () => {
  let graph: MockGraph.MockGraph
  let server: TestServer.Running

  beforeAll(async () => {
    graph = await MockGraph.start()
    server = await TestServer.start({
      messaging: { sender: false, templates: CloudTemplates.layer({ baseUrl: graph.url, timeoutMillis: 2000 }) }
    })
  })
  afterAll(async () => {
    await server?.close()
    await graph?.close()
  })
  afterEach(() => graph.reset())

  /** An account with a channel of a WABA of its own, connected with `token`. */
  const setUp = async (token = `EAAG-${crypto.randomUUID()}`) => {
    const account = await makeAccount(server)
    const waba = nextBusinessAccountId()
    const channel = await createChannel(server, account.ownerKey, { business_account_id: waba, access_token: token })
    return { key: account.ownerKey, waba, channel, token }
  }
  const post = (key: string, path: string, json?: unknown) =>
    call(server, "POST", path, json === undefined ? { auth: key } : { auth: key, json })
  const list = async (key: string) => (await call(server, "GET", "/api/v1/templates", { auth: key })).body.templates

  it("a sync lists every page with the channel's token and stores Meta's list", async () => {
    const { key, waba, token } = await setUp()
    graph.script(
      MockGraphTemplates.listPage(
        graph.url,
        [MockGraphTemplates.template({ id: "7001", name: "order_update" })],
        "QVFI"
      ),
      MockGraphTemplates.listPage(graph.url, [
        MockGraphTemplates.template({ id: "7002", name: "spring_offer", category: "MARKETING", status: "PAUSED" })
      ])
    )
    const reply = await post(key, "/api/v1/template-syncs")
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      business_accounts: [{ business_account_id: waba, templates: 2, removed: 0 }],
      templates: 2
    })
    expect(graph.requests().map((r) => [r.method, r.path, r.query, r.headers.authorization])).toEqual([
      ["GET", `/v24.0/${waba}/message_templates`, { fields: FIELDS, limit: "100" }, `Bearer ${token}`],
      ["GET", `/v24.0/${waba}/message_templates`, { fields: FIELDS, limit: "100", after: "QVFI" }, `Bearer ${token}`]
    ])
    expect(await list(key)).toEqual([
      expect.objectContaining({ external_id: "7001", name: "order_update", status: "APPROVED", quality: "GREEN" }),
      expect.objectContaining({ external_id: "7002", name: "spring_offer", category: "MARKETING", status: "PAUSED" })
    ])

    // Meta no longer has one: the next sync removes it.
    graph.script(
      MockGraphTemplates.listPage(graph.url, [MockGraphTemplates.template({ id: "7001", name: "order_update" })])
    )
    const again = await post(key, "/api/v1/template-syncs")
    expect(again.body).toEqual({
      business_accounts: [{ business_account_id: waba, templates: 1, removed: 1 }],
      templates: 1
    })
  })

  it("a create POSTs Meta's body to the WABA and stores Meta's answer; a delete sends name and hsm_id", async () => {
    const { key, waba, channel, token } = await setUp()
    graph.script(MockGraphTemplates.created("8801", "PENDING", "UTILITY"))
    const body = templateBody({ channel_id: channel.id })
    const reply = await post(key, "/api/v1/templates", body)
    expect(reply.status, reply.text).toBe(201)
    const [request] = graph.requests()
    expect([request!.method, request!.path, request!.headers.authorization]).toEqual([
      "POST",
      `/v24.0/${waba}/message_templates`,
      `Bearer ${token}`
    ])
    expect(request!.body).toEqual({
      name: body.name,
      language: body.language,
      category: body.category,
      components: body.components
    })
    expect(reply.body).toMatchObject({ external_id: "8801", status: "PENDING", business_account_id: waba })

    graph.reset()
    graph.script(MockGraphTemplates.deleted())
    const removed = await call(server, "DELETE", `/api/v1/templates/${reply.body.id}`, { auth: key })
    expect(removed.status, removed.text).toBe(200)
    expect(graph.requests().map((r) => [r.method, r.path, r.query])).toEqual([
      ["DELETE", `/v24.0/${waba}/message_templates`, { name: body.name, hsm_id: "8801" }]
    ])
    expect(await list(key)).toEqual([])
  })

  it("a review webhook that beats Meta's answer to the create is kept: found by name and language", async () => {
    const { key, waba, channel } = await setUp()
    // Meta answers the create after 400 ms; its review webhook arrives in between.
    graph.script(
      MockGraph.Reply.raw(
        200,
        JSON.stringify({ id: "8802", status: "PENDING", category: "UTILITY" }),
        "application/json",
        400
      )
    )
    const body = templateBody({ channel_id: channel.id })
    const creating = post(key, "/api/v1/templates", body)
    await graph.waitFor(1)
    const review = MetaTemplateWebhook.templatesPayload(
      waba,
      [
        {
          field: "message_template_status_update",
          event: "APPROVED",
          externalId: "8802",
          name: body.name,
          language: "en_US"
        }
      ],
      new Date()
    )
    expect((await postWebhook(server, review)).status).toBe(200)
    const reply = await creating
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toMatchObject({ external_id: "8802", status: "APPROVED", name: body.name })
  })

  it("Meta refusing is a 502 whatsapp_provider_error with Graph's message, and nothing changes", async () => {
    const { key, channel } = await setUp()
    graph.script(MockGraph.Reply.graphError(400, 100, { message: "Invalid parameter: components[0].text" }))
    const create = await post(key, "/api/v1/templates", templateBody({ channel_id: channel.id }))
    expect(create.status, create.text).toBe(502)
    expect(create.body).toEqual({
      error: "WhatsApp (Graph error 100): Invalid parameter: components[0].text",
      code: "whatsapp_provider_error"
    })
    expect(await list(key)).toEqual([])

    graph.script(
      MockGraphTemplates.created("8803"),
      MockGraph.Reply.graphError(400, 100, { message: "Invalid parameter" })
    )
    const made = await post(key, "/api/v1/templates", templateBody({ channel_id: channel.id }))
    expect(made.status, made.text).toBe(201)
    const removal = await call(server, "DELETE", `/api/v1/templates/${made.body.id}`, { auth: key })
    expect(removal.status, removal.text).toBe(502)
    expect(removal.body).toEqual({
      error: "WhatsApp (Graph error 100): Invalid parameter",
      code: "whatsapp_provider_error"
    })
    expect((await list(key)).map((t: { id: string }) => t.id)).toEqual([made.body.id])

    graph.script(MockGraph.Reply.graphError(401, 190, { message: "Error validating access token" }))
    const sync = await post(key, "/api/v1/template-syncs")
    expect(sync.status, sync.text).toBe(502)
    expect(sync.body.error).toBe("WhatsApp (Graph error 190): Error validating access token")
  })
})

describe("the scheduled template sync", () => {
  it("syncs a WABA once while its claim holds, however many rounds run", async () => {
    const graph = await MockGraph.start()
    const server = await TestServer.start({
      messaging: {
        sender: false,
        templates: CloudTemplates.layer({ baseUrl: graph.url, timeoutMillis: 2000 }),
        // Rounds every 100 ms; a claim lasts at least a second.
        templateSync: { intervalMillis: 100 }
      }
    })
    try {
      const account = await makeAccount(server)
      const waba = nextBusinessAccountId()
      await createChannel(server, account.ownerKey, { business_account_id: waba })
      graph.script(MockGraphTemplates.listPage(graph.url, [MockGraphTemplates.template({ id: "9001", name: "hello" })]))
      await graph.waitFor(1)
      await new Promise((resolve) => setTimeout(resolve, 600))
      expect(graph.requests().map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v24.0/${waba}/message_templates`])
      const stored = await call(server, "GET", "/api/v1/templates", { auth: account.ownerKey })
      expect(stored.body.templates.map((t: { name: string }) => t.name)).toEqual(["hello"])
    } finally {
      await server.close()
      await graph.close()
    }
  })
})

import { ConfigProvider, Effect, Exit, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import * as CloudTransport from "../src/cloud/CloudTransport.ts"

const parse = (env: Record<string, string>) =>
  Effect.runSyncExit(CloudTransport.config.parse(ConfigProvider.fromEnvRecord(env)))

const channel = { phoneNumberId: "106540352242922", accessToken: Redacted.make("token") }

describe("CloudTransport settings", () => {
  it("defaults to Meta's Graph API, v24.0 and 15 s", () => {
    expect(parse({})).toEqual(
      Exit.succeed({ baseUrl: "https://graph.facebook.com", version: "v24.0", timeoutMillis: 15_000 })
    )
    expect(CloudTransport.defaults).toEqual({
      baseUrl: "https://graph.facebook.com",
      version: "v24.0",
      timeoutMillis: 15_000
    })
  })

  it("reads WHATSAPP_API_BASE_URL, WHATSAPP_API_VERSION and WHATSAPP_SEND_TIMEOUT_SECONDS", () => {
    expect(
      parse({
        WHATSAPP_API_BASE_URL: "http://127.0.0.1:8080/graph/",
        WHATSAPP_API_VERSION: "v23.0",
        WHATSAPP_SEND_TIMEOUT_SECONDS: "2.5"
      })
    ).toEqual(Exit.succeed({ baseUrl: "http://127.0.0.1:8080/graph", version: "v23.0", timeoutMillis: 2_500 }))
  })

  it("refuses a base URL that is not a URL, a version not shaped vNN.N, a timeout that is not positive", () => {
    for (const env of [
      { WHATSAPP_API_BASE_URL: "graph.facebook.com" },
      { WHATSAPP_API_VERSION: "24.0" },
      { WHATSAPP_API_VERSION: " v24.0" },
      { WHATSAPP_SEND_TIMEOUT_SECONDS: "0" },
      { WHATSAPP_SEND_TIMEOUT_SECONDS: "-1" },
      { WHATSAPP_SEND_TIMEOUT_SECONDS: "soon" }
    ]) {
      expect(Exit.isFailure(parse(env)), JSON.stringify(env)).toBe(true)
    }
  })

  it("takes an empty variable as unset, as Effect's environment provider does", () => {
    expect(parse({ WHATSAPP_API_BASE_URL: "", WHATSAPP_API_VERSION: "", WHATSAPP_SEND_TIMEOUT_SECONDS: "" })).toEqual(
      Exit.succeed(CloudTransport.defaults)
    )
  })
})

describe("CloudTransport request", () => {
  it("builds the messages URL, one path segment per part", () => {
    const options = { ...CloudTransport.defaults, baseUrl: "http://127.0.0.1:9/graph/", version: "/v24.0/" }
    expect(CloudTransport.messagesUrl(options, "106540352242922")).toBe(
      "http://127.0.0.1:9/graph/v24.0/106540352242922/messages"
    )
    expect(CloudTransport.messagesUrl(options, "1/../2?x")).toBe(
      "http://127.0.0.1:9/graph/v24.0/1%2F..%2F2%3Fx/messages"
    )
  })

  it("builds Meta's text body, with link previews off", () => {
    expect(
      CloudTransport.requestBody({
        channel,
        to: "16315551181",
        body: { type: "text", text: "Hi" },
        callbackData: "msg_1"
      })
    ).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "16315551181",
      type: "text",
      text: { body: "Hi", preview_url: false },
      biz_opaque_callback_data: "msg_1"
    })
  })

  it("builds Meta's template body", () => {
    expect(
      CloudTransport.requestBody({
        channel,
        to: "16315551181",
        body: { type: "template", name: "hello_world", language: "en_US", components: [] },
        callbackData: "msg_2"
      })
    ).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "16315551181",
      type: "template",
      template: { name: "hello_world", language: { code: "en_US" }, components: [] },
      biz_opaque_callback_data: "msg_2"
    })
  })
})

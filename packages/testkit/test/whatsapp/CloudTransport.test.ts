import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import {
  type Accepted,
  MessageTransport,
  type OutboundRequest,
  OutcomeUnknown,
  Rejected,
  type SendFailure
} from "@leadline/core/messages/MessageTransport"
import * as CloudTransport from "@leadline/whatsapp-adapter/cloud/CloudTransport"
import { ConfigProvider, Effect, Layer, Redacted, Result } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as MockGraph from "../../src/whatsapp/MockGraph.ts"

const TOKEN = "EAAG-test-token-7f3a"

const textRequest: OutboundRequest = {
  channel: { phoneNumberId: "106540352242922", accessToken: Redacted.make(TOKEN) },
  to: "16315551181",
  body: { type: "text", text: "Hello from Leadline" },
  callbackData: "msg_01jq7r8z0v3m2k4n6p8s0t2w4y"
}

const templateRequest: OutboundRequest = {
  ...textRequest,
  body: {
    type: "template",
    name: "order_update",
    language: "en_US",
    components: [{ type: "body", parameters: [{ type: "text", text: "A-1001" }] }]
  },
  callbackData: "msg_01jq7r8z0v3m2k4n6p8s0t2w5z"
}

let mock: MockGraph.MockGraph

beforeEach(async () => {
  mock = await MockGraph.start()
})
afterEach(async () => {
  await mock.close()
})

const sendVia = (
  options: Partial<CloudTransport.Options>,
  request: OutboundRequest = textRequest
): Promise<Result.Result<Accepted, SendFailure>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const transport = yield* MessageTransport
      return yield* Effect.result(transport.send(request))
    }).pipe(Effect.provide(CloudTransport.layer(options)))
  )

const send = (request: OutboundRequest = textRequest) => sendVia({ baseUrl: mock.url }, request)

const failureOf = (result: Result.Result<Accepted, SendFailure>): SendFailure => {
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

const rejectedOf = (result: Result.Result<Accepted, SendFailure>): Rejected => {
  const failure = failureOf(result)
  expect(failure).toBeInstanceOf(Rejected)
  return failure as Rejected
}

/** The fields of a Rejected, for one toEqual. */
const fields = (rejected: Rejected) => ({
  retryable: rejected.retryable,
  retryAfterMs: rejected.retryAfterMs,
  providerCode: rejected.providerCode,
  message: rejected.message,
  channelError: rejected.channelError
})

/** The mock saw exactly one POST to the messages path: the adapter never retries. */
const expectOnePost = () => {
  const requests = mock.requests()
  expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v24.0/106540352242922/messages"])
  return requests[0]!
}

/** A port nothing listens on: bound by the OS, then released. */
const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe("CloudTransport: the request", () => {
  it("POSTs a text message with the bearer token and Meta's body", async () => {
    const result = await send()

    const request = expectOnePost()
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(request.headers["content-type"]).toBe("application/json")
    expect(request.headers.host).toBe(new URL(mock.url).host)
    // Our trace ids stay ours.
    expect(request.headers.traceparent).toBeUndefined()
    expect(request.headers.b3).toBeUndefined()
    expect(request.rawBody).toBe(
      '{"messaging_product":"whatsapp","recipient_type":"individual","to":"16315551181","type":"text",' +
        '"text":{"body":"Hello from Leadline","preview_url":false},' +
        '"biz_opaque_callback_data":"msg_01jq7r8z0v3m2k4n6p8s0t2w4y"}'
    )
    expect(result).toEqual(Result.succeed({ externalId: request.messageId, waId: "16315551181" }))
    expect(request.messageId).toMatch(/^wamid\./)
  })

  it("POSTs a template with its name, language code and components", async () => {
    const result = await send(templateRequest)

    const request = expectOnePost()
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(request.headers["content-type"]).toBe("application/json")
    expect(request.body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "16315551181",
      type: "template",
      template: {
        name: "order_update",
        language: { code: "en_US" },
        components: [{ type: "body", parameters: [{ type: "text", text: "A-1001" }] }]
      },
      biz_opaque_callback_data: "msg_01jq7r8z0v3m2k4n6p8s0t2w5z"
    })
    expect(request.rawBody).toBe(JSON.stringify(request.body))
    expect(Result.isSuccess(result) && result.success.externalId).toBe(request.messageId)
  })

  it("uses the configured version and escapes the phone number id into one path segment", async () => {
    await sendVia(
      { baseUrl: `${mock.url}/`, version: "v23.0" },
      { ...textRequest, channel: { ...textRequest.channel, phoneNumberId: "12/../34" } }
    )
    expect(mock.requests().map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v23.0/12%2F..%2F34/messages"])
  })

  it("returns the wa_id Meta answers with, which may differ from `to`", async () => {
    // Brazilian numbers: Meta's wa_id drops the ninth digit.
    mock.script(MockGraph.Reply.success({ messageId: "wamid.HBgMNTUxMTk4NzY1NDMyMRUCABEYEjA=", waId: "551187654321" }))
    const result = await send({ ...textRequest, to: "5511987654321" })
    expect(result).toEqual(
      Result.succeed({ externalId: "wamid.HBgMNTUxMTk4NzY1NDMyMRUCABEYEjA=", waId: "551187654321" })
    )
    expectOnePost()
  })

  it("never puts the token in a failure it reports", async () => {
    mock.script(MockGraph.Reply.graphError(401, 190))
    const failure = failureOf(await send())
    expect(JSON.stringify(failure)).not.toContain(TOKEN)
    expect(String(failure)).not.toContain(TOKEN)
  })
})

describe("CloudTransport: what came back (docs/contract-messaging.md §6.3)", () => {
  const retryable: ReadonlyArray<readonly [number, number]> = [
    [400, 130429],
    [400, 131056],
    [400, 131057],
    [400, 80007],
    [400, 4],
    [503, 2],
    [500, 131000]
  ]
  for (const [status, code] of retryable) {
    it(`Graph error ${code} (HTTP ${status}) → Rejected, retryable`, async () => {
      mock.script(MockGraph.Reply.graphError(status, code))
      const rejected = rejectedOf(await send())
      expect(fields(rejected)).toEqual({
        retryable: true,
        retryAfterMs: null,
        providerCode: code,
        message: MockGraph.graphErrorBody(code).error.message,
        channelError: false
      })
      expectOnePost()
    })
  }

  for (const status of [429, 503]) {
    it(`HTTP ${status} with a Graph error body of another code → Rejected, retryable`, async () => {
      mock.script(MockGraph.Reply.graphError(status, 131000, { message: "Something went wrong" }))
      const rejected = rejectedOf(await send())
      expect(fields(rejected)).toEqual({
        retryable: true,
        retryAfterMs: null,
        providerCode: 131000,
        message: "Something went wrong",
        channelError: false
      })
      expectOnePost()
    })
  }

  for (const [status, code] of [
    [401, 190],
    [401, 0],
    [403, 10],
    [403, 200],
    [403, 299]
  ] as const) {
    it(`token or permission error ${code} → Rejected, not retryable, channel error`, async () => {
      mock.script(MockGraph.Reply.graphError(status, code, { subcode: 463, message: "Error validating access token" }))
      const rejected = rejectedOf(await send())
      expect(fields(rejected)).toEqual({
        retryable: false,
        retryAfterMs: null,
        providerCode: code,
        message: "Error validating access token",
        channelError: true
      })
      expectOnePost()
    })
  }

  for (const code of [131026, 132001, 100, 131047, 132000, 368]) {
    it(`any other Graph error (${code}) → Rejected, not retryable, with its code and message`, async () => {
      mock.script(MockGraph.Reply.graphError(400, code))
      const rejected = rejectedOf(await send())
      expect(fields(rejected)).toEqual({
        retryable: false,
        retryAfterMs: null,
        providerCode: code,
        message: MockGraph.graphErrorBody(code).error.message,
        channelError: false
      })
      expectOnePost()
    })
  }

  it("connection refused → Rejected, retryable, no provider code", async () => {
    const port = await closedPort()
    const rejected = rejectedOf(await sendVia({ baseUrl: `http://127.0.0.1:${port}` }))
    expect({ ...fields(rejected), message: undefined }).toEqual({
      retryable: true,
      retryAfterMs: null,
      providerCode: null,
      message: undefined,
      channelError: false
    })
    expect(rejected.message).toContain("ECONNREFUSED")
    // Nothing reached a server; the mock (another port) saw nothing either.
    expect(mock.requests()).toEqual([])
  })

  it("no answer within the timeout → OutcomeUnknown, and no second POST", async () => {
    mock.script(MockGraph.Reply.hang())
    const started = Date.now()
    const failure = failureOf(await sendVia({ baseUrl: mock.url, timeoutMillis: 300 }))
    expect(failure).toEqual(new OutcomeUnknown({ reason: "no complete answer within 300 ms" }))
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    expectOnePost()
  })

  it("an answer slower than the timeout → OutcomeUnknown, though Meta took the message", async () => {
    mock.script(MockGraph.Reply.success({ delayMs: 1_000 }))
    const failure = failureOf(await sendVia({ baseUrl: mock.url, timeoutMillis: 300 }))
    expect(failure).toBeInstanceOf(OutcomeUnknown)
    expectOnePost()
  })

  it("connection reset after the request was read → OutcomeUnknown", async () => {
    mock.script(MockGraph.Reply.reset())
    const failure = failureOf(await send())
    expect(failure).toBeInstanceOf(OutcomeUnknown)
    expect((failure as OutcomeUnknown).reason).toMatch(/may have been sent/)
    expectOnePost()
  })

  it("socket closed without an answer after the request was read → OutcomeUnknown", async () => {
    mock.script(MockGraph.Reply.close())
    const failure = failureOf(await send())
    expect(failure).toBeInstanceOf(OutcomeUnknown)
    expect((failure as OutcomeUnknown).reason).toMatch(/may have been sent/)
    expectOnePost()
  })

  it("500 with an HTML body → OutcomeUnknown", async () => {
    mock.script(MockGraph.Reply.html(500))
    const failure = failureOf(await send())
    expect(failure).toEqual(new OutcomeUnknown({ reason: "HTTP 500 with a body that is not JSON" }))
    expectOnePost()
  })

  it("5xx with JSON that is not a Graph error → OutcomeUnknown", async () => {
    mock.script(MockGraph.Reply.raw(502, JSON.stringify({ message: "bad gateway" })))
    const failure = failureOf(await send())
    expect(failure).toEqual(new OutcomeUnknown({ reason: "HTTP 502 without a Graph error body" }))
    expectOnePost()
  })

  for (const [status, retryable] of [
    [429, true],
    [408, true],
    [400, false],
    [403, false]
  ] as const) {
    it(`${status} without a Graph error body (a proxy's page) → Rejected, ${retryable ? "retryable" : "not retryable"}`, async () => {
      mock.script(MockGraph.Reply.raw(status, "<html>refused</html>", "text/html"))
      const rejected = rejectedOf(await send())
      expect(fields(rejected)).toEqual({
        retryable,
        retryAfterMs: null,
        providerCode: null,
        message: `HTTP ${status} without a Graph error body`,
        channelError: false
      })
      expectOnePost()
    })
  }

  it("200 without messages[0].id → OutcomeUnknown", async () => {
    mock.script(MockGraph.Reply.withoutMessages())
    const failure = failureOf(await send())
    expect(failure).toEqual(new OutcomeUnknown({ reason: "HTTP 200 without messages[0].id" }))
    expectOnePost()
  })

  it("200 with a body that is not JSON → OutcomeUnknown", async () => {
    mock.script(MockGraph.Reply.raw(200, '{"messages":[{"id":"wamid.cut', "application/json"))
    const failure = failureOf(await send())
    expect(failure).toEqual(new OutcomeUnknown({ reason: "HTTP 200 with a body that is not JSON" }))
    expectOnePost()
  })

  it("sends each message once, in order, over one layer", async () => {
    mock.script(MockGraph.Reply.graphError(400, 130429), MockGraph.Reply.success({ messageId: "wamid.second" }))
    const results = await Effect.runPromise(
      Effect.gen(function* () {
        const transport = yield* MessageTransport
        const first = yield* Effect.result(transport.send(textRequest))
        const second = yield* Effect.result(transport.send(templateRequest))
        return [first, second] as const
      }).pipe(Effect.provide(CloudTransport.layer({ baseUrl: mock.url })))
    )
    expect(rejectedOf(results[0]).providerCode).toBe(130429)
    expect(results[1]).toEqual(Result.succeed({ externalId: "wamid.second", waId: "16315551181" }))
    expect(
      mock.requests().map((r) => (r.body as { biz_opaque_callback_data: string }).biz_opaque_callback_data)
    ).toEqual([textRequest.callbackData, templateRequest.callbackData])
  })
})

describe("CloudTransport.layerConfig", () => {
  it("reads the base URL, version and timeout from the environment", async () => {
    mock.script(MockGraph.Reply.hang())
    const env = {
      WHATSAPP_API_BASE_URL: `${mock.url}/`,
      WHATSAPP_API_VERSION: "v99.0",
      WHATSAPP_SEND_TIMEOUT_SECONDS: "0.3"
    }
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const transport = yield* MessageTransport
        return yield* Effect.result(transport.send(textRequest))
      }).pipe(
        Effect.provide(
          CloudTransport.layerConfig.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))
        )
      )
    )
    expect(failureOf(result)).toEqual(new OutcomeUnknown({ reason: "no complete answer within 300 ms" }))
    expect(mock.requests().map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v99.0/106540352242922/messages"])
  })
})

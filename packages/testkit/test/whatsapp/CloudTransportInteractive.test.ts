import {
  MessageTransport,
  type OutboundRequest,
  OutcomeUnknown,
  type ReadRequest,
  Rejected
} from "@leadline/core/messages/MessageTransport"
import * as CloudTransport from "@leadline/whatsapp-adapter/cloud/CloudTransport"
import { Effect, Redacted, Result } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as MockGraph from "../../src/whatsapp/MockGraph.ts"

/**
 * The Cloud API transport's interactive, reaction and read-receipt requests against a mock Graph
 * server (docs/contract-messaging.md §6.3): the bytes WhatsApp gets, and what each answer means.
 */

const TOKEN = "EAAG-test-token-7f3a"
const channel = { phoneNumberId: "106540352242922", accessToken: Redacted.make(TOKEN) }

const buttons: OutboundRequest = {
  channel,
  to: "16315551181",
  body: {
    type: "interactive",
    interactive: {
      type: "button",
      header: { type: "text", text: "Order #1042" },
      body: { text: "Keep the slot?" },
      footer: { text: "Reply any time" },
      action: { buttons: [{ type: "reply", reply: { id: "keep", title: "Keep it" } }] }
    }
  },
  callbackData: "msg_01jq7r8z0v3m2k4n6p8s0t2w4y"
}

const list: OutboundRequest = {
  ...buttons,
  body: {
    type: "interactive",
    interactive: {
      type: "list",
      body: { text: "Pick a slot" },
      action: {
        button: "See slots",
        sections: [{ title: "Tomorrow", rows: [{ id: "am", title: "Morning", description: "8 to 12" }] }]
      }
    }
  }
}

const reaction = (emoji: string): OutboundRequest => ({
  ...buttons,
  body: { type: "reaction", externalId: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=", emoji }
})

const receipt: ReadRequest = { channel, externalId: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=" }

let mock: MockGraph.MockGraph

beforeEach(async () => {
  mock = await MockGraph.start()
})
afterEach(async () => {
  await mock.close()
})

const withTransport = <A, E>(f: (transport: MessageTransport["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.result(MessageTransport.use(f)).pipe(Effect.provide(CloudTransport.layer({ baseUrl: mock.url })))
  )

const onePost = () => {
  const requests = mock.requests()
  expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v24.0/106540352242922/messages"])
  const [request] = requests
  expect(request!.headers.authorization).toBe(`Bearer ${TOKEN}`)
  expect(request!.headers["content-type"]).toBe("application/json")
  return request!
}

describe("CloudTransport: interactive messages and reactions", () => {
  it("POSTs reply buttons as Meta's interactive body, byte for byte", async () => {
    const result = await withTransport((transport) => transport.send(buttons))
    const request = onePost()
    expect(request.rawBody).toBe(
      '{"messaging_product":"whatsapp","recipient_type":"individual","to":"16315551181","type":"interactive",' +
        '"interactive":{"type":"button","header":{"type":"text","text":"Order #1042"},"body":{"text":"Keep the slot?"},' +
        '"footer":{"text":"Reply any time"},"action":{"buttons":[{"type":"reply","reply":{"id":"keep","title":"Keep it"}}]}},' +
        '"biz_opaque_callback_data":"msg_01jq7r8z0v3m2k4n6p8s0t2w4y"}'
    )
    expect(result).toEqual(Result.succeed({ externalId: request.messageId, waId: "16315551181" }))
  })

  it("POSTs a list with its button, sections and rows", async () => {
    await withTransport((transport) => transport.send(list))
    expect(onePost().body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "16315551181",
      type: "interactive",
      interactive: {
        type: "list",
        body: { text: "Pick a slot" },
        action: {
          button: "See slots",
          sections: [{ title: "Tomorrow", rows: [{ id: "am", title: "Morning", description: "8 to 12" }] }]
        }
      },
      biz_opaque_callback_data: "msg_01jq7r8z0v3m2k4n6p8s0t2w4y"
    })
  })

  it("POSTs a reaction naming the message by its wamid, and an empty emoji to remove it", async () => {
    for (const emoji of ["👍", ""]) {
      mock.reset()
      const result = await withTransport((transport) => transport.send(reaction(emoji)))
      const request = onePost()
      expect(request.rawBody).toBe(
        '{"messaging_product":"whatsapp","recipient_type":"individual","to":"16315551181","type":"reaction",' +
          `"reaction":{"message_id":"${receipt.externalId}","emoji":"${emoji}"},` +
          '"biz_opaque_callback_data":"msg_01jq7r8z0v3m2k4n6p8s0t2w4y"}'
      )
      expect(Result.isSuccess(result)).toBe(true)
    }
  })
})

describe("CloudTransport: read receipts", () => {
  it('POSTs {"status":"read"} on the wamid and takes Meta\'s {"success":true}', async () => {
    const result = await withTransport((transport) => transport.markRead(receipt))
    expect(onePost().rawBody).toBe(
      `{"messaging_product":"whatsapp","status":"read","message_id":"${receipt.externalId}"}`
    )
    expect(result).toEqual(Result.succeed(undefined))
  })

  it("classifies a Graph error as a send's, the channel's token included", async () => {
    mock.script(MockGraph.Reply.graphError(400, 100, { message: "Invalid parameter" }))
    const invalid = await withTransport((transport) => transport.markRead(receipt))
    expect(Result.isFailure(invalid) && invalid.failure).toBeInstanceOf(Rejected)
    expect(Result.isFailure(invalid) && (invalid.failure as Rejected).providerCode).toBe(100)
    expect(Result.isFailure(invalid) && (invalid.failure as Rejected).retryable).toBe(false)
    mock.script(MockGraph.Reply.graphError(401, 190))
    const expired = await withTransport((transport) => transport.markRead(receipt))
    expect(Result.isFailure(expired) && (expired.failure as Rejected).channelError).toBe(true)
  })

  it("does not take a 200 without success: true, nor a page that is not Graph's, as read", async () => {
    for (const reply of [MockGraph.Reply.raw(200, '{"success":false}'), MockGraph.Reply.html(502)]) {
      mock.reset()
      mock.script(reply)
      const result = await withTransport((transport) => transport.markRead(receipt))
      expect(Result.isFailure(result) && result.failure).toBeInstanceOf(OutcomeUnknown)
    }
  })
})

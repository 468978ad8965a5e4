import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as MockGraph from "../../src/whatsapp/MockGraph.ts"

let mock: MockGraph.MockGraph

beforeEach(async () => {
  mock = await MockGraph.start()
})
afterEach(async () => {
  await mock.close()
})

const post = (body: string) =>
  fetch(`${mock.url}/v24.0/106540352242922/messages?x=1`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer t" },
    body
  })

describe("MockGraph", () => {
  it("answers Meta's success body by default, with a new wamid per request, and records the request", async () => {
    const body = JSON.stringify({ messaging_product: "whatsapp", to: "16315551181", type: "text" })
    const first = await post(body)
    const second = await post(body)

    expect(first.status).toBe(200)
    expect(first.headers.get("content-type")).toBe("application/json")
    const [a, b] = mock.requests()
    expect(await first.json()).toEqual({
      messaging_product: "whatsapp",
      contacts: [{ input: "16315551181", wa_id: "16315551181" }],
      messages: [{ id: a!.messageId }]
    })
    expect(await second.json()).toMatchObject({ messages: [{ id: b!.messageId }] })
    expect(a!.messageId).toMatch(/^wamid\./)
    expect(a!.messageId).not.toBe(b!.messageId)
    expect(a).toMatchObject({
      method: "POST",
      path: "/v24.0/106540352242922/messages",
      rawBody: body,
      body: JSON.parse(body),
      reply: { kind: "success" }
    })
    expect(a!.headers).toMatchObject({ "content-type": "application/json", authorization: "Bearer t" })
  })

  it("answers scripted replies in order, then success again", async () => {
    mock.script(MockGraph.Reply.graphError(400, 131026, { subcode: 2494010 }), MockGraph.Reply.html(502))
    const error = await post("{}")
    const html = await post("not json")
    const after = await post("{}")

    expect(error.status).toBe(400)
    expect(await error.json()).toEqual({
      error: {
        message: "(#131026) Message undeliverable",
        type: "OAuthException",
        code: 131026,
        error_subcode: 2494010,
        error_data: { messaging_product: "whatsapp", details: "Message undeliverable" },
        fbtrace_id: "AbCdEfGhIjKlMnOpQrStUvW"
      }
    })
    expect(html.status).toBe(502)
    expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(await html.text()).toMatch(/^<!DOCTYPE html>/)
    expect(after.status).toBe(200)
    expect(mock.requests().map((r) => r.reply.kind)).toEqual(["graphError", "raw", "success"])
    expect(mock.requests()[1]!.body).toBeUndefined()
    expect(mock.requests()[1]!.rawBody).toBe("not json")
  })

  it("answers 200 without messages when asked", async () => {
    mock.script(MockGraph.Reply.withoutMessages())
    const response = await post("{}")
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ messaging_product: "whatsapp", contacts: [], messages: [] })
  })

  it("cuts the connection on reset and close, after recording the request", async () => {
    mock.script(MockGraph.Reply.reset(), MockGraph.Reply.close())
    await expect(post('{"to":"1"}')).rejects.toThrow()
    await expect(post('{"to":"2"}')).rejects.toThrow()
    expect(mock.requests().map((r) => r.body)).toEqual([{ to: "1" }, { to: "2" }])
  })

  it("fails a wait that is not met in time", async () => {
    await expect(mock.waitFor(1, 50)).rejects.toThrow("MockGraph: waited 50 ms for 1 request(s), got 0")
  })

  it("forgets requests and the rest of the script on reset()", async () => {
    mock.script(MockGraph.Reply.graphError(400, 100), MockGraph.Reply.graphError(400, 100))
    await post("{}")
    mock.reset()
    expect(mock.requests()).toEqual([])
    expect((await post("{}")).status).toBe(200)
  })

  it("closes with a request still hanging", async () => {
    mock.script(MockGraph.Reply.hang())
    const pending = post("{}")
    // The request is recorded once its body is read; the answer never comes.
    expect((await mock.waitFor(1)).map((r) => r.reply.kind)).toEqual(["hang"])
    await mock.close()
    await expect(pending).rejects.toThrow()
  })
})

import { MessageTransport, type OutboundRequest, type UploadRequest } from "@leadline/core/messages/MessageTransport"
import * as CloudTransport from "@leadline/whatsapp-adapter/cloud/CloudTransport"
import { Effect, Redacted, Result, Stream } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as MockGraph from "../../src/whatsapp/MockGraph.ts"

/**
 * The Cloud API transport's file uploads and file sends against a mock Graph server
 * (docs/contract-messaging.md §6.3): the multipart body Graph gets, and what each answer means. An
 * upload sends no message, so every failure is a refusal, retryable unless Graph said no for good.
 */

const TOKEN = "EAAG-test-token-media"
const channel = { phoneNumberId: "106540352242922", accessToken: Redacted.make(TOKEN) }

const bytes = new Uint8Array(70_000).map((_, i) => (i * 13) % 256)

const file = (
  chunks: ReadonlyArray<Uint8Array> = [bytes.subarray(0, 30_000), bytes.subarray(30_000)]
): UploadRequest => ({
  channel,
  type: "image",
  contentType: "image/jpeg",
  filename: 'spring "sale".jpg',
  size: bytes.length,
  bytes: Stream.fromIterable(chunks)
})

const send = (body: OutboundRequest["body"]): OutboundRequest => ({
  channel,
  to: "16315551181",
  body,
  callbackData: "msg_01jq7r8z0v3m2k4n6p8s0t2w4y"
})

let mock: MockGraph.MockGraph

const withTransport = <A, E>(f: (transport: MessageTransport["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.result(MessageTransport.use(f)).pipe(
      Effect.provide(CloudTransport.layer({ baseUrl: mock.url, timeoutMillis: 2_000 }))
    )
  )

const upload = (request: UploadRequest = file()) => withTransport((transport) => transport.upload(request))

beforeEach(async () => {
  mock = await MockGraph.start()
})
afterEach(() => mock.close())

describe("uploading a file to Graph", () => {
  it("posts Meta's multipart form to /{phone-number-id}/media with the token, and answers Graph's id", async () => {
    const result = await upload()
    expect(Result.isSuccess(result)).toBe(true)
    const [request] = mock.uploads()
    expect(result).toEqual(Result.succeed(request!.messageId))
    expect(request!.path).toBe("/v24.0/106540352242922/media")
    expect(request!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(request!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/)
    expect(Number(request!.headers["content-length"])).toBe(request!.bytes.length)
    const form = await new Response(request!.bytes as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": request!.headers["content-type"]! }
    }).formData()
    expect(form.get("messaging_product")).toBe("whatsapp")
    expect(form.get("type")).toBe("image/jpeg")
    const part = form.get("file") as File
    expect(part.type).toBe("image/jpeg")
    // A quote cannot be in a multipart header: it is replaced, the rest kept.
    expect(part.name).toBe("spring _sale_.jpg")
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes)
  })

  it("takes Graph refusing the file as a refusal for good, with Graph's code", async () => {
    mock.script(MockGraph.Reply.graphError(400, 131053, { message: "Media upload error" }))
    const result = await upload()
    expect(result).toMatchObject(
      Result.fail({
        _tag: "Rejected",
        retryable: false,
        providerCode: 131053,
        message: "Media upload error",
        channelError: false
      })
    )
  })

  it("retries what may pass later: a 429, a 5xx, no answer at all", async () => {
    mock.script(
      MockGraph.Reply.graphError(429, 130429),
      MockGraph.Reply.html(502),
      MockGraph.Reply.graphError(503, 2),
      MockGraph.Reply.reset()
    )
    for (let i = 0; i < 4; i++) {
      const result = await upload()
      expect(Result.isFailure(result), `answer ${i}`).toBe(true)
      expect((result as Result.Failure<string, { retryable: boolean }>).failure.retryable, `answer ${i}`).toBe(true)
    }
    expect(Result.isSuccess(await upload())).toBe(true)
    expect(mock.uploads()).toHaveLength(5)
  })

  it("takes a refused token as the channel's error, and a 2xx without an id as worth another try", async () => {
    mock.script(MockGraph.Reply.graphError(401, 190), MockGraph.Reply.raw(200, JSON.stringify({ ok: true })))
    expect(await upload()).toMatchObject(Result.fail({ retryable: false, providerCode: 190, channelError: true }))
    expect(await upload()).toMatchObject(Result.fail({ retryable: true, providerCode: null }))
  })
})

describe("sending a file", () => {
  const body = async (content: OutboundRequest["body"]) => {
    const result = await withTransport((transport) => transport.send(send(content)))
    expect(Result.isSuccess(result)).toBe(true)
    return mock.requests().at(-1)!.rawBody
  }

  it("names Graph's id of an uploaded image, with its caption", async () => {
    expect(
      await body({ type: "image", media: { id: "1037543291543636" }, caption: "The spring range", filename: null })
    ).toBe(
      JSON.stringify({
        messaging_product: "whatsapp",
        recipient_type: "individual",
        to: "16315551181",
        type: "image",
        image: { id: "1037543291543636", caption: "The spring range" },
        biz_opaque_callback_data: "msg_01jq7r8z0v3m2k4n6p8s0t2w4y"
      })
    )
  })

  it("gives a link as a link, a document its filename, and audio nothing more", async () => {
    expect(
      JSON.parse(
        await body({
          type: "document",
          media: { link: "https://cdn.example.com/terms.pdf" },
          caption: null,
          filename: "terms.pdf"
        })
      )
    ).toMatchObject({
      type: "document",
      document: { link: "https://cdn.example.com/terms.pdf", filename: "terms.pdf" }
    })
    const audio = JSON.parse(await body({ type: "audio", media: { id: "99" }, caption: null, filename: null }))
    expect(audio.audio).toEqual({ id: "99" })
  })
})

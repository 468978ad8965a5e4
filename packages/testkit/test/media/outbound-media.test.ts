import { mkdtemp, readdir, rm } from "node:fs/promises"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Layer } from "effect"
import * as Services from "@leadline/core/Services"
import * as MemoryStores from "@leadline/memory-adapter/MemoryStores"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as FileMediaStore from "@leadline/server/FileMediaStore"
import * as CloudTransport from "@leadline/whatsapp-adapter/cloud/CloudTransport"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { makeConversation, postWebhook } from "../../src/conversations/ConversationsResource.ts"
import { pdfFile, pngFile, upload, webpFile } from "../../src/conversations/OutboundMedia.ts"
import { type AccountFixture, makeAccount } from "../../src/Fixtures.ts"
import { call } from "../../src/Http.ts"
import { until } from "../../src/internal/wire.ts"
import * as TestDatabase from "../../src/TestDatabase.ts"
import * as TestServer from "../../src/TestServer.ts"
import * as Wirings from "../../src/Wirings.ts"
import * as MockGraph from "../../src/whatsapp/MockGraph.ts"
import { peakGrowth } from "./PeakMemory.ts"

/**
 * Outbound files through the Cloud API transport, against a mock Graph server
 * (docs/contract-messaging.md §5.9, §7.3), on SQL with each media store: the database's (PostgreSQL,
 * in chunks) and a directory's. The sender uploads a file to Graph once per channel (again once
 * Graph's id is 29 days old), sends Graph's id, fails the message when Graph refuses the file, and
 * retries a rate limit or a 5xx. Then the simulator's side, in memory: it takes uploads, and plays a
 * refusal for a file named `refused…`.
 */

const files = async (directory: string): Promise<ReadonlyArray<string>> =>
  (await readdir(directory, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))

const stores: ReadonlyArray<readonly [string, boolean]> = [
  ["with the PostgreSQL media store", false],
  ["with the directory media store", true]
]

for (const [name, inDirectory] of stores) {
  describe(`outbound files through the Cloud API, on SQL ${name}`, () => {
    let graph: MockGraph.MockGraph
    let database: TestDatabase.TestDatabase
    let server: TestServer.Running
    let account: AccountFixture
    let directory: string | undefined

    beforeAll(async () => {
      graph = await MockGraph.start()
      database = await TestDatabase.make()
      directory = inDirectory ? await mkdtemp(join(tmpdir(), "leadline-outbound-")) : undefined
      server = await TestServer.start({
        app: SqlApp.layer(database.config, directory === undefined ? undefined : FileMediaStore.layer(directory)),
        messaging: {
          transport: CloudTransport.layer({ baseUrl: graph.url, timeoutMillis: 2_000 }),
          senderOptions: { pollMillis: 100 }
        }
      })
      account = await makeAccount(server)
    })
    beforeEach(() => graph.reset())
    afterAll(async () => {
      await server?.close()
      await graph?.close()
      await database?.dispose()
      if (directory !== undefined) await rm(directory, { recursive: true, force: true })
    })

    const key = () => account.ownerKey
    const get = async (path: string) => {
      const reply = await call(server, "GET", path, { auth: key() })
      expect(reply.status, reply.text).toBe(200)
      return reply.body
    }
    const send = async (conversationId: string, body: unknown) => {
      const reply = await call(server, "POST", `/api/v1/conversations/${conversationId}/messages`, {
        auth: key(),
        json: body
      })
      expect(reply.status, reply.text).toBe(201)
      return reply.body.id as string
    }
    const settled = (id: string, timeoutMs = 15_000) =>
      until(
        () => get(`/api/v1/messages/${id}`),
        (message) => message.status !== "queued",
        timeoutMs
      )
    const sendsOf = (id: string) =>
      graph
        .requests()
        .filter((r) => (r.body as { biz_opaque_callback_data?: string } | undefined)?.biz_opaque_callback_data === id)

    it("uploads a file to Graph once per channel, and sends Graph's id", async () => {
      const file = pngFile(300_000, "range.png")
      const media = (await upload(server, key(), file)).body
      const first = await makeConversation(server, key())
      const ids = [
        await send(first.conversation.id, { type: "image", image: { id: media.id, caption: "Spring" } }),
        await send(first.conversation.id, { type: "image", image: { id: media.id } })
      ]
      for (const id of ids) expect((await settled(id)).status).toBe("sent")
      const [uploaded] = graph.uploads()
      expect(graph.uploads()).toHaveLength(1)
      expect(uploaded!.path).toBe(`/v24.0/${first.channel.phone_number_id}/media`)
      const form = await new Response(uploaded!.bytes as Uint8Array<ArrayBuffer>, {
        headers: { "content-type": uploaded!.headers["content-type"]! }
      }).formData()
      expect(form.get("type")).toBe("image/png")
      expect(new Uint8Array(await (form.get("file") as File).arrayBuffer())).toEqual(file.bytes)
      expect(sendsOf(ids[0]!)[0]!.body).toMatchObject({
        type: "image",
        image: { id: uploaded!.messageId, caption: "Spring" }
      })
      expect((sendsOf(ids[1]!)[0]!.body as { image: unknown }).image).toEqual({ id: uploaded!.messageId })

      // Graph's ids are per number: another channel gets its own upload.
      const second = await makeConversation(server, key())
      const third = await send(second.conversation.id, { type: "image", image: { id: media.id } })
      expect((await settled(third)).status).toBe("sent")
      expect(graph.uploads().map((r) => r.path)).toEqual([
        `/v24.0/${first.channel.phone_number_id}/media`,
        `/v24.0/${second.channel.phone_number_id}/media`
      ])

      // Graph keeps a file 30 days: at 28 days its id is used again, past 29 the file goes up again.
      const laterOnFirst = async (days: number) => {
        server.clock.advance(`${days} days`)
        const raw = MetaPayloads.inboundTextPayload({
          phoneNumberId: first.channel.phone_number_id,
          displayPhoneNumber: "16505551111",
          from: first.from,
          name: "Ada Customer",
          text: "Still there?",
          externalId: `wamid.${crypto.randomUUID()}`,
          timestamp: new Date(server.clock.clock.currentTimeMillisUnsafe())
        })
        expect((await postWebhook(server, raw)).status).toBe(200)
        const id = await send(first.conversation.id, { type: "image", image: { id: media.id } })
        expect((await settled(id)).status).toBe("sent")
        return (sendsOf(id)[0]!.body as { image: { id: string } }).image.id
      }
      expect(await laterOnFirst(28)).toBe(uploaded!.messageId)
      expect(graph.uploads()).toHaveLength(2)
      const renewed = await laterOnFirst(1.5)
      expect(graph.uploads()).toHaveLength(3)
      expect(renewed).toBe(graph.uploads()[2]!.messageId)
      expect(renewed).not.toBe(uploaded!.messageId)
    })

    it("sends a sticker as Meta's sticker object: its WebP uploaded, no caption", async () => {
      const media = (await upload(server, key(), webpFile(20_000, "wave.webp"))).body
      expect(media.type).toBe("sticker")
      const { conversation } = await makeConversation(server, key())
      const id = await send(conversation.id, { type: "sticker", sticker: { id: media.id } })
      expect((await settled(id)).status).toBe("sent")
      const [uploaded] = graph.uploads()
      const form = await new Response(uploaded!.bytes as Uint8Array<ArrayBuffer>, {
        headers: { "content-type": uploaded!.headers["content-type"]! }
      }).formData()
      expect(form.get("type")).toBe("image/webp")
      expect(sendsOf(id)[0]!.body).toMatchObject({ type: "sticker", sticker: { id: uploaded!.messageId } })
      expect((sendsOf(id)[0]!.body as { sticker: unknown }).sticker).toEqual({ id: uploaded!.messageId })
    })

    it("makes one upload for sends of a file that arrive while it is under way", async () => {
      const media = (await upload(server, key(), pngFile(10_000, "slow.png"))).body
      const { conversation } = await makeConversation(server, key())
      // Graph takes its time over the upload: the other sends are claimed meanwhile.
      graph.script(MockGraph.Reply.success({ delayMs: 800 }))
      const ids = await Promise.all(
        [1, 2, 3].map((n) => send(conversation.id, { type: "image", image: { id: media.id, caption: `Take ${n}` } }))
      )
      for (const id of ids) expect((await settled(id)).status).toBe("sent")
      expect(graph.uploads()).toHaveLength(1)
      const graphId = graph.uploads()[0]!.messageId
      expect(ids.map((id) => (sendsOf(id)[0]!.body as { image: { id: string } }).image.id)).toEqual([
        graphId,
        graphId,
        graphId
      ])
    })

    it("fails the message when Graph refuses the file, and sends nothing", async () => {
      const media = (await upload(server, key(), pdfFile(5000, "terms.pdf"))).body
      const { conversation } = await makeConversation(server, key())
      graph.script(MockGraph.Reply.graphError(400, 131053, { message: "Media upload error" }))
      const used = async () => (await get("/api/usage")).usage.messages_used as number
      const before = await used()
      const id = await send(conversation.id, { type: "document", document: { id: media.id } })
      const message = await settled(id)
      expect(message).toMatchObject({
        status: "failed",
        error: {
          code: "media_upload_failed",
          message: "WhatsApp refused the file: Media upload error",
          provider_code: 131053
        }
      })
      expect(graph.uploads()).toHaveLength(1)
      expect(sendsOf(id)).toEqual([])
      // A failed message gives its use back (§10).
      expect(await used()).toBe(before)
    })

    it("retries an upload Graph rate-limited or failed with a 5xx, then sends", async () => {
      const media = (await upload(server, key(), pdfFile(6000, "menu.pdf"))).body
      const { conversation } = await makeConversation(server, key())
      graph.script(MockGraph.Reply.graphError(429, 4), MockGraph.Reply.html(502))
      const id = await send(conversation.id, { type: "document", document: { id: media.id, caption: "Menu" } })
      const message = await settled(id, 20_000)
      expect(message.status, JSON.stringify(message.error)).toBe("sent")
      expect(graph.uploads()).toHaveLength(3)
      expect(sendsOf(id)).toHaveLength(1)
      expect(sendsOf(id)[0]!.body).toMatchObject({
        type: "document",
        document: { id: graph.uploads()[2]!.messageId, caption: "Menu", filename: "menu.pdf" }
      })
    }, 30_000)

    it("keeps nothing of an upload over the limit, and refuses a link to a private host", async () => {
      const before = directory === undefined ? [] : await files(directory)
      const big = await upload(server, key(), {
        bytes: new Uint8Array(16 * 1024 * 1024 + 1),
        contentType: "video/mp4",
        filename: "long.mp4"
      })
      expect(big.status, big.text).toBe(413)
      expect(big.body.details).toEqual([{ path: "file", message: "at most 16777216 bytes for a video" }])
      // Refused after the file was read: the type part comes after it, or the file is empty.
      const late = new FormData()
      late.append("file", new Blob([new Uint8Array(5000)], { type: "image/png" }), "late.png")
      late.append("type", "document")
      const lateType = await call(server, "POST", "/api/v1/media", { auth: key(), form: late })
      expect(lateType.status, lateType.text).toBe(400)
      expect(lateType.body.details).toEqual([{ path: "type", message: "an image/png file is sent as an image" }])
      expect((await upload(server, key(), pngFile(0))).status).toBe(400)
      if (directory !== undefined) expect(await files(directory)).toEqual(before)
      const { conversation } = await makeConversation(server, key())
      for (const link of ["https://10.1.2.3/a.jpg", "https://localhost/a.jpg", "https://printer.internal/a.jpg"]) {
        const reply = await call(server, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
          auth: key(),
          json: { type: "image", image: { link } }
        })
        expect(reply.status, `${link}: ${reply.text}`).toBe(400)
        expect(reply.body.details).toEqual([
          { path: "image.link", message: "link must not point at a private or internal address" }
        ])
      }
    })
  })
}

describe("outbound files through the simulator, in memory", () => {
  const staged = Wirings.stage(Wirings.wirings[0]![1])

  it("answers 413 to an upload whose declared length is over the route's limit, before reading it", async () => {
    const declared = await new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
      const request = httpRequest(
        `${staged.server.baseUrl}/api/v1/media`,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${staged.account.ownerKey}`,
            "content-type": "multipart/form-data; boundary=x",
            "content-length": String(200 * 1024 * 1024)
          }
        },
        (response) => {
          let body = ""
          response.on("data", (chunk) => {
            body += chunk
          })
          response.on("end", () => {
            request.destroy()
            resolve({ status: response.statusCode, body })
          })
        }
      )
      request.on("error", reject)
      request.flushHeaders()
    })
    expect(declared.status).toBe(413)
    expect(JSON.parse(declared.body)).toEqual({
      error: "The request body is over the limit of 105906176 bytes",
      code: "payload_too_large"
    })
  })

  it("takes an upload and answers an id of its own; a file named refused… is refused and fails the message", async () => {
    const key = staged.account.ownerKey
    const { conversation } = await makeConversation(staged.server, key)
    const ids: Array<string> = []
    for (const filename of ["menu.pdf", "refused-scan.pdf"]) {
      const media = (await upload(staged.server, key, pdfFile(1000, filename))).body
      const reply = await call(staged.server, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: key,
        json: { type: "document", document: { id: media.id } }
      })
      expect(reply.status, reply.text).toBe(201)
      ids.push(reply.body.id)
    }
    const ended = async (id: string) =>
      (
        await until(
          () => call(staged.server, "GET", `/api/v1/messages/${id}`, { auth: key }),
          (reply) => reply.body.status !== "queued",
          15_000
        )
      ).body
    expect((await ended(ids[0]!)).status).not.toBe("failed")
    expect(await ended(ids[1]!)).toMatchObject({
      status: "failed",
      error: { code: "media_upload_failed", provider_code: 131053 }
    })
  })
})

// The memory wiring with the directory store, as the inbound test of a large file does: an embedded
// database's WebAssembly memory grows in steps of its own, which would blur what the upload holds.
describe("a large upload, into a directory", () => {
  const size = 64 * 1024 * 1024
  let server: TestServer.Running
  let directory: string

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "leadline-upload-"))
    server = await TestServer.start({
      app: Services.layer.pipe(Layer.provideMerge(Layer.merge(MemoryStores.layer, FileMediaStore.layer(directory))))
    })
  })
  afterAll(async () => {
    await server?.close()
    await rm(directory, { recursive: true, force: true })
  })

  it("streams it: memory stays flat while 64 MiB go from the request into the store", async () => {
    const account = await makeAccount(server)
    const boundary = "leadline-test-boundary"
    const encoder = new TextEncoder()
    const head = encoder.encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="catalogue.pdf"\r\nContent-Type: application/pdf\r\n\r\n`
    )
    const tail = encoder.encode(`\r\n--${boundary}--\r\n`)
    const chunk = new Uint8Array(256 * 1024).map((_, i) => i % 256)
    let answer: { status: number; body: any } | undefined
    const grown = await peakGrowth(async () => {
      // Made as it is sent: the client holds one chunk, never the file.
      let sent = -1
      const body = new ReadableStream<Uint8Array>({
        pull: (controller) => {
          if (sent === -1) controller.enqueue(head)
          else if (sent < size) controller.enqueue(chunk)
          else {
            controller.enqueue(tail)
            controller.close()
          }
          sent = sent === -1 ? 0 : sent + chunk.length
        }
      })
      const response = await fetch(`${server.baseUrl}/api/v1/media`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${account.ownerKey}`,
          "content-type": `multipart/form-data; boundary=${boundary}`
        },
        body,
        duplex: "half"
      } as RequestInit)
      answer = { status: response.status, body: await response.json() }
    })
    expect(answer?.status, JSON.stringify(answer?.body)).toBe(201)
    expect(answer?.body).toMatchObject({ type: "document", mime_type: "application/pdf", size })
    // Holding the file whole once would add 64 MiB; streaming holds a few chunks at a time.
    expect(grown).toBeLessThan(size / 2)
  }, 60_000)
})

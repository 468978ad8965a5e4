import { createHash } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Layer } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as FileMediaStore from "@leadline/server/FileMediaStore"
import * as MemoryStores from "@leadline/memory-adapter/MemoryStores"
import * as Services from "@leadline/core/Services"
import * as CloudMedia from "@leadline/whatsapp-adapter/cloud/CloudMedia"
import { createChannel } from "../../src/channels/ChannelsResource.ts"
import { nextWaId, postWebhook } from "../../src/conversations/ConversationsResource.ts"
import { inboundFilePayload, receiveFile, settledMedia } from "../../src/conversations/InboundMedia.ts"
import { type AccountFixture, makeAccount } from "../../src/Fixtures.ts"
import { call } from "../../src/Http.ts"
import * as TestServer from "../../src/TestServer.ts"
import { peakGrowth } from "./PeakMemory.ts"
import * as MockGraph from "../../src/whatsapp/MockGraph.ts"

const bytesOf = (length: number, seed: number) => {
  const bytes = new Uint8Array(length)
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) % 256
  return bytes
}

const download = async (baseUrl: string, key: string, messageId: string) => {
  const response = await fetch(`${baseUrl}/api/v1/messages/${messageId}/media`, {
    headers: { authorization: `Bearer ${key}` }
  })
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

describe("inbound media through the Cloud API, against a mock Graph server", () => {
  let graph: MockGraph.MockGraph
  let server: TestServer.Running
  let account: AccountFixture
  let channel: { id: string; phone_number_id: string }
  const token = "EAAG-media-token"

  beforeAll(async () => {
    graph = await MockGraph.start()
    server = await TestServer.start({
      messaging: {
        mediaDownloader: CloudMedia.layer({ baseUrl: graph.url, version: "v24.0", timeoutMillis: 2_000 }),
        mediaFetcher: { pollMillis: 100, retryBaseMillis: 20, maxAttempts: 3 }
      }
    })
    account = await makeAccount(server)
    channel = await createChannel(server, account.ownerKey, { access_token: token })
  })
  beforeEach(() => graph.reset())
  afterAll(async () => {
    await server?.close()
    await graph?.close()
  })

  it("asks Graph for the media id's URL, then its bytes, both with the channel's token, and keeps them", async () => {
    const bytes = bytesOf(300_000, 7)
    graph.media("1003383421387256", bytes, { mimeType: "audio/ogg" })
    const { messageId, media } = await receiveFile(
      server,
      account.ownerKey,
      { type: "audio", mediaId: "1003383421387256", mimeType: "audio/ogg; codecs=opus" },
      { channel }
    )
    const sha256 = createHash("sha256").update(bytes).digest("hex")
    expect(media).toMatchObject({ state: "stored", reason: null, size: bytes.length, sha256 })
    expect(graph.requests().map((request) => [request.method, request.path, request.headers.authorization])).toEqual([
      ["GET", "/v24.0/1003383421387256", `Bearer ${token}`],
      ["GET", "/files/1003383421387256", `Bearer ${token}`]
    ])
    const got = await download(server.baseUrl, account.ownerKey, messageId)
    expect(got.status).toBe(200)
    // The type Graph gave the bytes.
    expect(got.headers.get("content-type")).toBe("audio/ogg")
    expect(got.headers.get("etag")).toBe(`"${sha256}"`)
    expect(got.bytes).toEqual(bytes)
  })

  it("answers the webhook without waiting for the file: it reads pending until Graph answers", async () => {
    const bytes = bytesOf(20_000, 13)
    graph.media("slow", bytes, { mimeType: "image/jpeg" })
    // Graph never answers the first ask; the fetcher's timeout (2 s) ends it and the next try keeps it.
    graph.script(MockGraph.Reply.hang())
    const started = Date.now()
    const reply = await postWebhook(
      server,
      inboundFilePayload(channel.phone_number_id, nextWaId(), {
        type: "image",
        mediaId: "slow",
        mimeType: "image/jpeg"
      })
    )
    expect(reply.status).toBe(200)
    expect(Date.now() - started).toBeLessThan(1_000)
    const list = await call(server, "GET", `/api/v1/conversations?channel_id=${channel.id}&limit=1`, {
      auth: account.ownerKey
    })
    const thread = list.body.conversations[0].id as string
    const messages = await call(server, "GET", `/api/v1/conversations/${thread}/messages?limit=1`, {
      auth: account.ownerKey
    })
    const message = messages.body.messages[0]
    expect(message.media).toMatchObject({ provider_media_id: "slow", state: "pending", reason: null, size: null })
    const pending = await call(server, "GET", `/api/v1/messages/${message.id}/media`, { auth: account.ownerKey })
    expect(pending.status).toBe(409)
    expect(pending.body).toEqual({
      error: `The file of message ${message.id} is still being fetched; try again shortly`,
      code: "media_not_stored",
      details: [{ path: "media.state", message: "pending" }]
    })
    expect(await settledMedia(server, account.ownerKey, message.id)).toMatchObject({
      state: "stored",
      size: bytes.length
    })
  })

  it("ends failed with media_gone when Graph answers that the media id does not exist", async () => {
    const { media } = await receiveFile(
      server,
      account.ownerKey,
      { type: "image", mediaId: "expired-1", mimeType: "image/jpeg" },
      { channel }
    )
    expect(media).toMatchObject({ state: "failed", reason: "media_gone", size: null })
    // Not retried: an id Meta no longer has never comes back.
    expect(graph.requests().map((request) => request.path)).toEqual(["/v24.0/expired-1"])
  })

  it("retries a Graph 429, then keeps the file", async () => {
    const bytes = bytesOf(10_000, 3)
    graph.media("rate-limited", bytes, { mimeType: "image/png" })
    graph.script(MockGraph.Reply.graphError(429, 80007))
    const { media } = await receiveFile(
      server,
      account.ownerKey,
      { type: "image", mediaId: "rate-limited", mimeType: "image/png" },
      { channel }
    )
    expect(media).toMatchObject({ state: "stored", size: bytes.length })
    expect(graph.requests().map((request) => [request.path, request.reply.kind])).toEqual([
      ["/v24.0/rate-limited", "graphError"],
      ["/v24.0/rate-limited", "success"],
      ["/files/rate-limited", "success"]
    ])
  })

  it("retries a 5xx from Graph, then keeps the file", async () => {
    const bytes = bytesOf(50_000, 5)
    graph.media("flaky", bytes, { mimeType: "video/mp4" })
    graph.script(MockGraph.Reply.html(502), MockGraph.Reply.graphError(500, 2))
    const { media } = await receiveFile(
      server,
      account.ownerKey,
      { type: "video", mediaId: "flaky", mimeType: "video/mp4" },
      { channel }
    )
    expect(media).toMatchObject({ state: "stored", size: bytes.length })
    expect(graph.requests()).toHaveLength(4)
  })

  it("retries a 5xx on the bytes themselves, asking for a fresh URL, then keeps the file", async () => {
    const bytes = bytesOf(700_000, 11)
    graph.media("cdn-trouble", bytes, { mimeType: "application/pdf", failDownloads: 1 })
    const { messageId, media } = await receiveFile(
      server,
      account.ownerKey,
      { type: "document", mediaId: "cdn-trouble", mimeType: "application/pdf", filename: "menu.pdf" },
      { channel }
    )
    expect(media).toMatchObject({ state: "stored", size: bytes.length, filename: "menu.pdf" })
    expect(graph.requests().map((request) => request.path)).toEqual([
      "/v24.0/cdn-trouble",
      "/files/cdn-trouble",
      "/v24.0/cdn-trouble",
      "/files/cdn-trouble"
    ])
    expect((await download(server.baseUrl, account.ownerKey, messageId)).bytes).toEqual(bytes)
  })

  it("gives up after the last attempt when Graph keeps failing: failed with download_failed", async () => {
    graph.media("down", bytesOf(100, 1), { mimeType: "image/png" })
    graph.script(MockGraph.Reply.html(503), MockGraph.Reply.html(503), MockGraph.Reply.html(503))
    const { media } = await receiveFile(
      server,
      account.ownerKey,
      { type: "image", mediaId: "down", mimeType: "image/png" },
      { channel }
    )
    expect(media).toMatchObject({ state: "failed", reason: "download_failed" })
    expect(graph.requests()).toHaveLength(3)
  })

  it("does not download a file Graph says is over its type's limit", async () => {
    graph.media("huge", bytesOf(5 * 1024 * 1024 + 1, 9), { mimeType: "image/jpeg" })
    const { media } = await receiveFile(
      server,
      account.ownerKey,
      { type: "image", mediaId: "huge", mimeType: "image/jpeg" },
      { channel }
    )
    expect(media).toMatchObject({ state: "failed", reason: "too_large" })
    expect(graph.requests().map((request) => request.path)).toEqual(["/v24.0/huge"])
  })
})

// The memory wiring with the directory store: an embedded database's WebAssembly memory grows in
// steps of its own, which would blur what the file's path holds.
describe("a large inbound file, from Graph into a directory", () => {
  const size = 64 * 1024 * 1024
  let graph: MockGraph.MockGraph
  let server: TestServer.Running
  let directory: string

  beforeAll(async () => {
    graph = await MockGraph.start()
    directory = await mkdtemp(join(tmpdir(), "leadline-media-"))
    server = await TestServer.start({
      app: Services.layer.pipe(Layer.provideMerge(Layer.merge(MemoryStores.layer, FileMediaStore.layer(directory)))),
      messaging: { mediaDownloader: CloudMedia.layer({ baseUrl: graph.url, timeoutMillis: 10_000 }) }
    })
  })
  afterAll(async () => {
    await server?.close()
    await graph?.close()
    await rm(directory, { recursive: true, force: true })
  })

  // Retried: the probe reads the whole process's live memory, and a busy CI machine has measured
  // from 3 to 63 MB of buffers awaiting release around the same run; holding the file whole would
  // fail every try.
  it("streams it: memory stays flat while it is fetched, checked and kept, and while it is served", {
    timeout: 120_000,
    retry: 2
  }, async () => {
    const account = await makeAccount(server)
    const bytes = bytesOf(size, 17)
    const sha256 = createHash("sha256").update(bytes).digest("hex")
    graph.media("big-document", bytes, { mimeType: "application/pdf" })
    let served: { sha256: string; size: number } | undefined
    const grown = await peakGrowth(async () => {
      const { messageId, media } = await receiveFile(
        server,
        account.ownerKey,
        { type: "document", mediaId: "big-document", mimeType: "application/pdf" },
        // A loaded CI machine took 47-58 s for the 64 MiB here: the bound is for a hang, not for speed.
        { timeoutMs: 100_000 }
      )
      expect(media).toMatchObject({ state: "stored", size, sha256 })
      const response = await fetch(`${server.baseUrl}/api/v1/messages/${messageId}/media`, {
        headers: { authorization: `Bearer ${account.ownerKey}` }
      })
      expect(response.headers.get("content-length")).toBe(String(size))
      const hash = createHash("sha256")
      let length = 0
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        hash.update(chunk)
        length += chunk.length
      }
      served = { sha256: hash.digest("hex"), size: length }
    })
    expect(served).toEqual({ sha256, size })
    // Holding the file whole once would add 64 MiB; streaming holds a few chunks at a time, plus
    // the noise of a busy process (a loaded CI run measured 38 MB: buffers freed late, the server's
    // other loops), so the bound sits between the two.
    expect(grown).toBeLessThan(size * 0.75)
  })
})

import { describe, expect, it } from "vitest"
import { makeAccount, makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { notFound, until } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import { makeConversation } from "./ConversationsResource.ts"
import { pdfFile, pngFile, upload, webpFile } from "./OutboundMedia.ts"

const sha256Hex = async (bytes: Uint8Array) =>
  Buffer.from(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)).toString("hex")

/** A public https link WhatsApp would fetch (the contract never lets the server fetch it). */
const LINK = "https://cdn.example.com/catalogue/spring.jpg"

/**
 * Outbound files (docs/contract-messaging.md §5.9): uploads through `POST /api/v1/media`, their
 * checks, and image, video, audio, document and sticker sends naming an upload or a link, as any target
 * answers them, whichever transport it sends through.
 */
export const contract = (context: ContractContext) => {
  describe("outbound files", () => {
    const post = (key: string, path: string, json?: unknown) => call(context.target, "POST", path, { auth: key, json })
    const get = async (key: string, path: string) => {
      const reply = await call(context.target, "GET", path, { auth: key })
      expect(reply.status, reply.text).toBe(200)
      return reply.body
    }
    const used = async (key: string) => (await get(key, "/api/usage")).usage.messages_used as number

    it("keeps an upload and answers it, with messages:send; GET reads it; an unknown id is 404", async () => {
      const account = await makeAccount(context.target, { keys: { sender: ["messages:send"] } })
      const sender = account.keys.sender!.apiKey
      const file = pngFile(3000, "spring.png")
      const made = await upload(context.target, sender, { ...file, type: "image" })
      expect(made.status, made.text).toBe(201)
      expect(made.body).toEqual({
        id: expect.stringMatching(/^med_[0-9a-z]{26}$/),
        type: "image",
        mime_type: "image/png",
        size: 3000,
        sha256: await sha256Hex(file.bytes),
        filename: "spring.png",
        created_at: expect.any(String)
      })
      expect(await get(account.ownerKey, `/api/v1/media/${made.body.id}`)).toEqual(made.body)
      const document = await upload(context.target, sender, pdfFile())
      expect(document.status, document.text).toBe(201)
      expect(document.body).toMatchObject({ type: "document", mime_type: "application/pdf", filename: "invoice.pdf" })

      const unknown = await call(context.target, "GET", "/api/v1/media/med_00000000000000000000000000", {
        auth: sender
      })
      expect(unknown.status, unknown.text).toBe(404)
      expect(unknown.body).toEqual(notFound("media", "med_00000000000000000000000000"))
      const elsewhere = await call(context.target, "GET", `/api/v1/media/${made.body.id}`, {
        auth: context.other.ownerKey
      })
      expect(elsewhere.status, elsewhere.text).toBe(404)
      const reader = await makeKey(context.target, account.accountId, { scopes: ["conversations:read"] })
      const refused = await upload(context.target, reader.apiKey, pngFile())
      expect(refused.status, refused.text).toBe(403)
      expect(refused.body).toEqual({ error: "Insufficient scope: requires messages:send", code: "forbidden" })
    })

    it("refuses an upload over its type's limit with a 413, and a bad one with a 400 naming the part", async () => {
      const key = (await makeAccount(context.target)).ownerKey
      const big = await upload(context.target, key, {
        bytes: new Uint8Array(5 * 1024 * 1024 + 1),
        contentType: "image/jpeg",
        filename: "huge.jpg"
      })
      expect(big.status, big.text).toBe(413)
      expect(big.body).toEqual({
        error: "The file is over the limit of 5242880 bytes for an image",
        code: "payload_too_large",
        details: [{ path: "file", message: "at most 5242880 bytes for an image" }]
      })
      const cases: ReadonlyArray<readonly [string, Parameters<typeof upload>[2], Record<string, string>, string]> = [
        ["no file", undefined, {}, "file"],
        ["an empty file", { ...pngFile(0) }, {}, "file"],
        ["a type WhatsApp does not send", { ...pngFile(), contentType: "text/html" }, {}, "file"],
        ["an image sent as a document", { ...pngFile(), type: "document" }, {}, "type"],
        ["an image sent as a sticker", { ...pngFile(), type: "sticker" }, {}, "type"],
        ["an unknown type", { ...pngFile(), type: "gif" }, {}, "type"],
        ["a second file part under another name", pngFile(), { other: "x" }, "other"]
      ]
      for (const [what, file, extra, field] of cases) {
        const reply =
          what === "a second file part under another name"
            ? await uploadTwoFiles(context, key)
            : await upload(context.target, key, file, extra)
        expect(reply.status, `${what}: ${reply.text}`).toBe(400)
        expect(reply.body.code, what).toBe("validation_error")
        expect(
          reply.body.details.map((detail: { path: string }) => detail.path),
          what
        ).toEqual([field])
      }
      const json = await post(key, "/api/v1/media", { file: "aGVsbG8=" })
      expect(json.status, json.text).toBe(415)
      expect(json.body.code).toBe("unsupported_media_type")
    })

    it("queues an image by its upload and a document by a link, and WhatsApp gets both", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const { conversation, channel } = await makeConversation(context.target, key)
      const image = await upload(context.target, key, pngFile(2048, "look.png"))
      const sent = await post(key, `/api/v1/conversations/${conversation.id}/messages`, {
        type: "image",
        image: { id: image.body.id, caption: "The spring range" }
      })
      expect(sent.status, sent.text).toBe(201)
      expect(sent.body).toMatchObject({
        conversation_id: conversation.id,
        direction: "outbound",
        type: "image",
        text: "The spring range",
        status: "queued",
        media: {
          media_id: image.body.id,
          link: null,
          mime_type: "image/png",
          size: 2048,
          sha256: image.body.sha256,
          filename: null,
          caption: "The spring range"
        }
      })
      const linked = await post(key, "/api/v1/messages", {
        type: "document",
        document: { link: "https://cdn.example.com/terms.pdf", filename: "terms.pdf" },
        lead_id: conversation.lead_id,
        channel_id: channel.id
      })
      expect(linked.status, linked.text).toBe(201)
      expect(linked.body.media).toEqual({
        media_id: null,
        link: "https://cdn.example.com/terms.pdf",
        mime_type: null,
        size: null,
        sha256: null,
        filename: "terms.pdf",
        caption: null
      })
      expect(await used(key)).toBe(2)
      for (const id of [sent.body.id, linked.body.id]) {
        const settled = await until(
          () => get(key, `/api/v1/messages/${id}`),
          (message) => message.status !== "queued",
          15_000
        )
        expect(settled.status, JSON.stringify(settled.error)).not.toBe("failed")
        expect(settled.external_id).not.toBeNull()
      }
      // The thread shows what was sent: the upload's bytes, tagged by their SHA-256; a link was never here.
      const file = await fetch(`${context.target.baseUrl}/api/v1/messages/${sent.body.id}/media`, {
        headers: { authorization: `Bearer ${key}` }
      })
      expect(file.status).toBe(200)
      expect(file.headers.get("content-type")).toBe("image/png")
      expect(file.headers.get("etag")).toBe(`"${image.body.sha256}"`)
      expect(new Uint8Array(await file.arrayBuffer())).toEqual(pngFile(2048, "look.png").bytes)
      const byLink = await call(context.target, "GET", `/api/v1/messages/${linked.body.id}/media`, { auth: key })
      expect(byLink.status).toBe(404)
    })

    it("keeps a WebP as a sticker (Meta's 500 KB at most) and sends it by its upload", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const { conversation } = await makeConversation(context.target, key)
      const sticker = await upload(context.target, key, webpFile(4096, "wave.webp"))
      expect(sticker.status, sticker.text).toBe(201)
      expect(sticker.body).toMatchObject({ type: "sticker", mime_type: "image/webp", size: 4096 })
      const big = await upload(context.target, key, webpFile(500 * 1024 + 1, "big.webp"))
      expect(big.status, big.text).toBe(413)
      expect(big.body.details).toEqual([{ path: "file", message: "at most 512000 bytes for a sticker" }])
      const sent = await post(key, `/api/v1/conversations/${conversation.id}/messages`, {
        type: "sticker",
        sticker: { id: sticker.body.id }
      })
      expect(sent.status, sent.text).toBe(201)
      expect(sent.body).toMatchObject({
        type: "sticker",
        text: null,
        status: "queued",
        media: { media_id: sticker.body.id, link: null, mime_type: "image/webp", size: 4096, caption: null }
      })
      const settled = await until(
        () => get(key, `/api/v1/messages/${sent.body.id}`),
        (message) => message.status !== "queued",
        15_000
      )
      expect(settled.status, JSON.stringify(settled.error)).not.toBe("failed")
      expect(settled.external_id).not.toBeNull()
      expect(await used(key)).toBe(1)
    })

    it("refuses every bad file send with a 400 naming the field, and stores and counts nothing", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const { conversation } = await makeConversation(context.target, key)
      const image = (await upload(context.target, key, pngFile())).body.id as string
      const document = (await upload(context.target, key, pdfFile())).body.id as string
      const elsewhere = (await upload(context.target, context.other.ownerKey, pngFile())).body.id as string
      const path = `/api/v1/conversations/${conversation.id}/messages`
      const sends: ReadonlyArray<readonly [string, unknown, string]> = [
        ["no file field", { type: "image" }, "image"],
        ["neither id nor link", { type: "image", image: { caption: "x" } }, "image.id"],
        ["both id and link", { type: "image", image: { id: image, link: LINK } }, "image.link"],
        ["an http link", { type: "image", image: { link: "http://cdn.example.com/a.jpg" } }, "image.link"],
        [
          "a link with credentials",
          { type: "image", image: { link: "https://u:p@cdn.example.com/a.jpg" } },
          "image.link"
        ],
        ["not a URL", { type: "image", image: { link: "https://" } }, "image.link"],
        ["an unknown media id", { type: "image", image: { id: "med_00000000000000000000000000" } }, "image.id"],
        ["another account's media", { type: "image", image: { id: elsewhere } }, "image.id"],
        ["a PDF as an image", { type: "image", image: { id: document } }, "image.id"],
        ["an image as a document", { type: "document", document: { id: image } }, "document.id"],
        ["a caption over 1024", { type: "image", image: { id: image, caption: "x".repeat(1025) } }, "image.caption"],
        ["an empty caption", { type: "video", video: { link: LINK, caption: "" } }, "video.caption"],
        ["a caption on audio", { type: "audio", audio: { link: LINK, caption: "hi" } }, "audio.caption"],
        ["a filename on an image", { type: "image", image: { id: image, filename: "a.png" } }, "image.filename"],
        ["an empty filename", { type: "document", document: { id: document, filename: "" } }, "document.filename"],
        ["text beside an image", { type: "image", image: { id: image }, text: "hi" }, "text"],
        ["an image field on a text", { type: "text", text: "hi", image: { id: image } }, "image"],
        ["a PNG as a sticker", { type: "sticker", sticker: { id: image } }, "sticker.id"],
        ["a caption on a sticker", { type: "sticker", sticker: { link: LINK, caption: "hi" } }, "sticker.caption"],
        ["an unknown type", { type: "gif", gif: { link: LINK } }, "type"]
      ]
      for (const [what, body, field] of sends) {
        const reply = await post(key, path, body)
        expect(reply.status, `${what}: ${reply.text}`).toBe(400)
        expect(reply.body.code, what).toBe("validation_error")
        expect(
          reply.body.details.map((detail: { path: string }) => detail.path),
          what
        ).toContain(field)
      }
      const toLead = await post(key, "/api/v1/messages", {
        type: "image",
        image: { id: elsewhere },
        lead_id: conversation.lead_id
      })
      expect(toLead.status, toLead.text).toBe(400)
      expect(toLead.body.details).toEqual([{ path: "image.id", message: "no such media in this account" }])
      expect(await used(key)).toBe(0)
      expect((await get(key, path)).messages).toHaveLength(1)
    })
  })
}

/** A form with the file and a second file part under another name: only `file` is one. */
const uploadTwoFiles = async (context: ContractContext, key: string) => {
  const form = new FormData()
  form.append("other", new Blob([new Uint8Array(10)], { type: "image/png" }), "b.png")
  form.append("file", new Blob([new Uint8Array(10)], { type: "image/png" }), "a.png")
  return call(context.target, "POST", "/api/v1/media", { auth: key, form })
}

import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import * as MediaLimits from "@leadline/core/messages/MediaLimits"
import * as SimulatorMedia from "@leadline/whatsapp-adapter/simulator/SimulatorMedia"
import { createChannel } from "../../src/channels/ChannelsResource.ts"
import { makeConversation } from "../../src/conversations/ConversationsResource.ts"
import { receiveFile, simulatedImage } from "../../src/conversations/InboundMedia.ts"
import { makeAccount } from "../../src/Fixtures.ts"
import { call } from "../../src/Http.ts"
import { stage, wirings } from "../../src/Wirings.ts"

const hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** GET …/media as raw bytes, with the headers. */
const download = async (baseUrl: string, key: string, messageId: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${baseUrl}/api/v1/messages/${messageId}/media`, {
    headers: { authorization: `Bearer ${key}`, ...headers }
  })
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

for (const [name, wire] of wirings) {
  describe(`inbound media ${name}`, () => {
    // A sticker's limit below the simulator's 4 KiB files, to see `too_large`.
    const staged = stage(wire, {
      messaging: { mediaFetcher: { limits: { ...MediaLimits.defaults, sticker: 1000 } } }
    })

    it("keeps an inbound image and serves its bytes with their type, length and ETag", async () => {
      const target = staged.server
      const key = staged.account.ownerKey
      const file = simulatedImage()
      const { messageId, media } = await receiveFile(target, key, file)
      const bytes = SimulatorMedia.bytesOf(file.mediaId)
      expect(media).toEqual({
        provider_media_id: file.mediaId,
        mime_type: "image/jpeg",
        sha256: hex(bytes),
        filename: null,
        state: "stored",
        reason: null,
        size: bytes.length
      })
      const got = await download(target.baseUrl, key, messageId)
      expect(got.status).toBe(200)
      expect(got.headers.get("content-type")).toBe("image/jpeg")
      expect(got.headers.get("content-length")).toBe(String(bytes.length))
      expect(got.headers.get("etag")).toBe(`"${hex(bytes)}"`)
      expect(got.bytes).toEqual(bytes)
      expect(got.headers.get("x-content-type-options")).toBe("nosniff")
      expect(got.headers.get("content-security-policy")).toBe("sandbox; default-src 'none'")

      const again = await download(target.baseUrl, key, messageId, { "if-none-match": `"${hex(bytes)}"` })
      expect(again.status).toBe(304)
      expect(again.headers.get("etag")).toBe(`"${hex(bytes)}"`)
      expect(again.bytes.length).toBe(0)
      const changed = await download(target.baseUrl, key, messageId, { "if-none-match": '"other"' })
      expect(changed.status).toBe(200)
    })

    it("checks WhatsApp's SHA-256, given as hex or base64", async () => {
      const target = staged.server
      const key = staged.account.ownerKey
      const file = simulatedImage()
      const base64 = createHash("sha256").update(SimulatorMedia.bytesOf(file.mediaId)).digest("base64")
      const kept = await receiveFile(target, key, { ...file, sha256: base64 })
      expect(kept.media.state).toBe("stored")
      expect(kept.media.sha256).toBe(hex(SimulatorMedia.bytesOf(file.mediaId)))

      const wrong = await receiveFile(target, key, { ...simulatedImage(), sha256: "0".repeat(64) })
      expect(wrong.media).toMatchObject({ state: "failed", reason: "checksum_mismatch", size: null })
    })

    it("ends failed, never pending, when WhatsApp no longer has the file; GET …/media is then 409", async () => {
      const target = staged.server
      const key = staged.account.ownerKey
      const { messageId, media } = await receiveFile(target, key, {
        type: "document",
        mediaId: `gone-${crypto.randomUUID()}`,
        mimeType: "application/pdf",
        filename: "invoice.pdf"
      })
      expect(media).toMatchObject({ state: "failed", reason: "media_gone", size: null, filename: "invoice.pdf" })
      const got = await call(target, "GET", `/api/v1/messages/${messageId}/media`, { auth: key })
      expect(got.status).toBe(409)
      expect(got.body).toEqual({
        error: `The file of message ${messageId} could not be kept (media_gone)`,
        code: "media_not_stored",
        details: [{ path: "media.state", message: "failed: media_gone" }]
      })
    })

    it("fails a file over its type's limit as too_large", async () => {
      const target = staged.server
      const key = staged.account.ownerKey
      const { media } = await receiveFile(target, key, {
        type: "sticker",
        mediaId: `sim-${crypto.randomUUID()}`,
        mimeType: "image/webp"
      })
      expect(media).toMatchObject({ state: "failed", reason: "too_large", size: null })
    })

    it("answers 404 for an unknown message, a message without a file, and another account's message", async () => {
      const target = staged.server
      const key = staged.account.ownerKey
      const unknown = await call(target, "GET", "/api/v1/messages/msg_00000000000000000000000000/media", { auth: key })
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual({
        error: "No message with id msg_00000000000000000000000000",
        code: "not_found"
      })

      const { conversation } = await makeConversation(target, key, "Just text")
      const listed = await call(target, "GET", `/api/v1/conversations/${conversation.id}/messages`, { auth: key })
      const textId = listed.body.messages[0].id as string
      expect(listed.body.messages[0].media).toBeNull()
      const text = await call(target, "GET", `/api/v1/messages/${textId}/media`, { auth: key })
      expect(text.status).toBe(404)
      expect(text.body).toEqual({ error: `No message media with id ${textId}`, code: "not_found" })

      const { messageId } = await receiveFile(target, key, simulatedImage())
      const other = await makeAccount(staged.server)
      const foreign = await call(target, "GET", `/api/v1/messages/${messageId}/media`, { auth: other.ownerKey })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual({ error: `No message with id ${messageId}`, code: "not_found" })
    })

    it("needs conversations:read or messages:send", async () => {
      const target = staged.server
      const channel = await createChannel(target, staged.account.ownerKey)
      const { messageId } = await receiveFile(target, staged.account.ownerKey, simulatedImage(), { channel })
      const leads = await call(target, "POST", "/api/keys", {
        auth: staged.account.ownerKey,
        json: { name: "leads only", scopes: ["leads:read"] }
      })
      const denied = await call(target, "GET", `/api/v1/messages/${messageId}/media`, { auth: leads.body.api_key })
      expect(denied.status).toBe(403)
      expect(denied.body).toEqual({ error: "Insufficient scope: requires conversations:read", code: "forbidden" })
    })
  })
}

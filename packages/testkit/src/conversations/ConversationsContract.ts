import { readFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import * as MetaSignature from "@leadline/core/whatsapp/MetaSignature"
import * as MetaWebhook from "@leadline/core/whatsapp/MetaWebhook"
import { createChannel } from "../channels/ChannelsResource.ts"
import { call } from "../Http.ts"
import { forbidden } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import { makeConversation, nextWaId, postWebhook } from "./ConversationsResource.ts"

const fixture = (name: string) => readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "whatsapp", name))

/** The phone_number_id of Meta's documented payloads (fixtures/whatsapp). */
const FIXTURE_NUMBER = "123456123"

/** WhatsApp in: the handshake, signatures over the raw bytes, dedupe, and the lead, conversation and message it makes. */
export const contract = (context: ContractContext) => {
  describe("whatsapp inbound", () => {
    const messagesOf = async (conversationId: string) => {
      const reply = await call(context.target, "GET", `/api/v1/conversations/${conversationId}/messages`, {
        auth: context.acme.ownerKey
      })
      expect(reply.status, reply.text).toBe(200)
      return reply.body.messages as Array<Record<string, any>>
    }
    const conversationsOfChannel = async (channelId: string) =>
      (
        await call(context.target, "GET", `/api/v1/conversations?channel_id=${channelId}`, {
          auth: context.acme.ownerKey
        })
      ).body.conversations as Array<Record<string, any>>

    let fixtureChannel: { id: string }
    beforeAll(async () => {
      fixtureChannel = await createChannel(context.target, context.acme.ownerKey, { phone_number_id: FIXTURE_NUMBER })
    })

    it("answers the handshake with the challenge only for the right verify token", async () => {
      const url = (token: string) =>
        `${context.target.baseUrl}/webhooks/whatsapp?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${token}`
      const token = (context.target as { whatsappVerifyToken?: string }).whatsappVerifyToken ?? ""
      const right = await fetch(url(encodeURIComponent(token)))
      expect(right.status).toBe(200)
      expect(right.headers.get("content-type")).toMatch(/^text\/plain/)
      expect(await right.text()).toBe("1158201444")
      const wrong = await fetch(url("nope"))
      expect(wrong.status).toBe(403)
      expect(await wrong.json()).toEqual({ error: "Wrong verify token", code: "forbidden" })
    })

    it("stores Meta's test payload: a new lead, an open conversation, the message as sent", async () => {
      const reply = await postWebhook(context.target, fixture("text-message.json"))
      expect(reply.status).toBe(200)
      expect(await reply.json()).toEqual({})
      const [conversation] = await conversationsOfChannel(fixtureChannel.id)
      expect(conversation).toMatchObject({
        status: "open",
        contact_wa_id: "16315551181",
        last_inbound_at: "2017-09-08T20:36:28.000Z",
        service_window_expires_at: "2017-09-09T20:36:28.000Z"
      })
      const lead = await call(context.target, "GET", `/api/v1/leads/${conversation!.lead_id}`, {
        auth: context.acme.ownerKey
      })
      expect(lead.body).toMatchObject({ name: "test user name", phone: "+16315551181", status: "new" })
      const [message] = await messagesOf(conversation!.id)
      expect(message).toMatchObject({
        direction: "inbound",
        type: "text",
        text: "this is a text message",
        status: "received",
        external_id: "ABGGFlA5Fpa",
        sender_type: "lead",
        sender_id: conversation!.lead_id,
        provider_timestamp: "2017-09-08T20:36:28.000Z"
      })
      expect(message!.provider_payload).toEqual(
        JSON.parse(fixture("text-message.json").toString()).entry[0].changes[0].value.messages[0]
      )
      const read = await call(context.target, "GET", `/api/v1/messages/${message!.id}`, { auth: context.acme.ownerKey })
      expect(read.body).toEqual(message)
    })

    it("verifies the bytes as sent: Meta's escaped unicode is stored decoded, a re-serialised body is refused", async () => {
      const raw = fixture("escaped-unicode.json")
      const reserialised = new TextEncoder().encode(JSON.stringify(JSON.parse(raw.toString())))
      const forged = await postWebhook(
        context.target,
        reserialised,
        MetaSignature.sign(context.target.whatsappAppSecret!, raw)
      )
      expect(forged.status).toBe(401)
      const reply = await postWebhook(context.target, raw)
      expect(reply.status).toBe(200)
      const texts = (
        await messagesOf(
          (
            await conversationsOfChannel(fixtureChannel.id)
          ).find((c) => c.contact_wa_id === JSON.parse(raw.toString()).entry[0].changes[0].value.messages[0].from)!.id
        )
      ).map((m) => m.text)
      expect(texts).toContain("J'ai mangé des pâtes / ok 😀")
    })

    it("refuses a missing, wrong or sha1 signature with 401 and stores nothing", async () => {
      const channel = await createChannel(context.target, context.acme.ownerKey)
      const raw = MetaWebhook.inboundTextPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from: nextWaId(),
        name: null,
        text: "unsigned",
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date()
      })
      const tampered = Uint8Array.from(raw)
      tampered[tampered.length - 3] = tampered[tampered.length - 3]! ^ 1
      for (const [body, signature] of [
        [raw, null],
        [raw, "sha256=" + "0".repeat(64)],
        [raw, "sha1=0123456789abcdef0123456789abcdef01234567"],
        [tampered, MetaSignature.sign(context.target.whatsappAppSecret!, raw)]
      ] as const) {
        const reply = await postWebhook(context.target, body, signature)
        expect(reply.status).toBe(401)
        expect(await reply.json()).toEqual({ error: "Missing or wrong X-Hub-Signature-256", code: "unauthorized" })
      }
      expect(await conversationsOfChannel(channel.id)).toEqual([])
    })

    it("stores a message delivered three times, twice at once, only once", async () => {
      const channel = await createChannel(context.target, context.acme.ownerKey)
      const raw = MetaWebhook.inboundTextPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from: nextWaId(),
        name: "Twice",
        text: "once only",
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date()
      })
      const replies = await Promise.all([postWebhook(context.target, raw), postWebhook(context.target, raw)])
      expect(replies.map((r) => r.status)).toEqual([200, 200])
      expect((await postWebhook(context.target, raw)).status).toBe(200)
      const conversations = await conversationsOfChannel(channel.id)
      expect(conversations).toHaveLength(1)
      expect((await messagesOf(conversations[0]!.id)).map((m) => m.text)).toEqual(["once only"])
    })

    it("acknowledges a number no channel has, and a body that is not WhatsApp's, storing nothing", async () => {
      const before = await call(context.target, "GET", "/api/v1/conversations?limit=1", { auth: context.acme.ownerKey })
      const unknown = MetaWebhook.inboundTextPayload({
        phoneNumberId: "999000999000",
        displayPhoneNumber: "16505550000",
        from: nextWaId(),
        name: null,
        text: "to nobody",
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date()
      })
      expect((await postWebhook(context.target, unknown)).status).toBe(200)
      expect((await postWebhook(context.target, new TextEncoder().encode('{"object":"page"}'))).status).toBe(200)
      expect((await postWebhook(context.target, new TextEncoder().encode("not json"))).status).toBe(200)
      const after = await call(context.target, "GET", "/api/v1/conversations?limit=1", { auth: context.acme.ownerKey })
      expect(after.body.meta.total).toBe(before.body.meta.total)
    })

    it("finds the lead by phone, and reopens its conversation on the next message", async () => {
      const { conversation, from, channel } = await makeConversation(context.target, context.acme.ownerKey, "first")
      const again = MetaWebhook.inboundTextPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from,
        name: "Ada Customer",
        text: "second",
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date()
      })
      expect((await postWebhook(context.target, again)).status).toBe(200)
      const conversations = await conversationsOfChannel(channel.id)
      expect(conversations.map((c) => c.id)).toEqual([conversation.id])
      expect((await messagesOf(conversation.id)).map((m) => m.text)).toEqual(["second", "first"])
    })

    it("lets conversations:read read conversations, and refuses leads-only keys with the narrowest scope", async () => {
      const { conversation } = await makeConversation(context.target, context.acme.ownerKey)
      const reader = context.acme.keys.conversations!.apiKey
      const read = await call(context.target, "GET", `/api/v1/conversations/${conversation.id}`, { auth: reader })
      expect(read.status).toBe(200)
      const refused = await call(context.target, "GET", "/api/v1/conversations", {
        auth: context.acme.keys.leadsWrite!.apiKey
      })
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual(forbidden("conversations:read"))
      const other = await call(context.target, "GET", `/api/v1/conversations/${conversation.id}`, {
        auth: context.other.ownerKey
      })
      expect(other.status).toBe(404)
    })
  })
}

import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import * as Client from "@leadline/http-adapter/Client"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { createChannel } from "../channels/ChannelsResource.ts"
import { call } from "../Http.ts"
import { forbidden } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import { makeAccount } from "../Fixtures.ts"
import { makeConversation, nextWaId, postWebhook, TEMPLATE_SEND } from "./ConversationsResource.ts"

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
      const token = context.target.whatsappVerifyToken ?? ""
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

    it("records an error WhatsApp reports for the number (value.errors) as the channel's last_error", async () => {
      expect((await postWebhook(context.target, fixture("value-errors-130429.json"))).status).toBe(200)
      const channel = await call(context.target, "GET", `/api/v1/channels/${fixtureChannel.id}`, {
        auth: context.acme.ownerKey
      })
      expect(channel.body.last_error).toEqual({
        code: "provider_error",
        message: "Rate limit hit",
        provider_code: 130429
      })
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
      const raw = MetaPayloads.inboundTextPayload({
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

    it("refuses a body over Meta's 3 MiB with 413, before checking or parsing it", async () => {
      const huge = new TextEncoder().encode(
        `{"object":"whatsapp_business_account","pad":"${"x".repeat(3 * 1024 * 1024)}"}`
      )
      const reply = await postWebhook(context.target, huge)
      expect(reply.status).toBe(413)
      expect(await reply.json()).toEqual({
        error: "The request body is over the limit of 3145728 bytes",
        code: "payload_too_large"
      })
    })

    it("stores a message delivered three times, twice at once, only once", async () => {
      const channel = await createChannel(context.target, context.acme.ownerKey)
      const raw = MetaPayloads.inboundTextPayload({
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

    it("acknowledges a number no channel has, refuses a signed body that is not WhatsApp's with 400, storing nothing", async () => {
      const before = await call(context.target, "GET", "/api/v1/conversations?limit=1", { auth: context.acme.ownerKey })
      const unknown = MetaPayloads.inboundTextPayload({
        phoneNumberId: "999000999000",
        displayPhoneNumber: "16505550000",
        from: nextWaId(),
        name: null,
        text: "to nobody",
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date()
      })
      expect((await postWebhook(context.target, unknown)).status).toBe(200)
      for (const [body, reason] of [
        ['{"entry":[]}', 'object is not "whatsapp_business_account"'],
        ["not json", "not JSON"]
      ] as const) {
        const refused = await postWebhook(context.target, new TextEncoder().encode(body))
        expect(refused.status).toBe(400)
        expect(await refused.json()).toEqual({
          error: `The body is not a WhatsApp Business Account webhook: ${reason}`,
          code: "validation_error"
        })
      }
      const after = await call(context.target, "GET", "/api/v1/conversations?limit=1", { auth: context.acme.ownerKey })
      expect(after.body.meta.total).toBe(before.body.meta.total)
    })

    it("pages a thread from a message with before, and refuses a message of another thread", async () => {
      const { conversation, channel, from } = await makeConversation(context.target, context.acme.ownerKey, "one")
      for (const text of ["two", "three"]) {
        const raw = MetaPayloads.inboundTextPayload({
          phoneNumberId: channel.phone_number_id,
          displayPhoneNumber: "16505551111",
          from,
          name: null,
          text,
          externalId: `wamid.${crypto.randomUUID()}`,
          timestamp: new Date(channel.created_at as string)
        })
        expect((await postWebhook(context.target, raw)).status).toBe(200)
      }
      const all = await messagesOf(conversation.id)
      expect(all.map((m) => m.text)).toEqual(["three", "two", "one"])
      const older = await call(
        context.target,
        "GET",
        `/api/v1/conversations/${conversation.id}/messages?before=${all[0]!.id}`,
        {
          auth: context.acme.ownerKey
        }
      )
      expect(older.body.messages.map((m: { text: string }) => m.text)).toEqual(["two", "one"])
      expect(older.body.meta.total).toBe(2)
      const other = await makeConversation(context.target, context.acme.ownerKey)
      const foreign = (await messagesOf(other.conversation.id))[0]!
      const refused = await call(
        context.target,
        "GET",
        `/api/v1/conversations/${conversation.id}/messages?before=${foreign.id}`,
        {
          auth: context.acme.ownerKey
        }
      )
      expect(refused.status).toBe(400)
      expect(refused.body.details).toEqual([{ path: "before", message: "not a message of this conversation" }])
    })

    it("finds the lead by phone, and reopens its conversation on the next message", async () => {
      const { conversation, from, channel } = await makeConversation(context.target, context.acme.ownerKey, "first")
      const again = MetaPayloads.inboundTextPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from,
        name: "Ada Customer",
        text: "second",
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date(channel.created_at as string)
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

  describe("sending", () => {
    const send = (key: string, conversationId: string, body: unknown, headers?: Record<string, string>) =>
      call(context.target, "POST", `/api/v1/conversations/${conversationId}/messages`, {
        auth: key,
        json: body,
        headers
      })
    const usage = async (key: string) =>
      (await call(context.target, "GET", "/api/usage", { auth: key })).body.usage as {
        messages_used: number
        messages_limit: number
      }

    it("queues a text inside the 24-hour window and a template at any time, and counts both", async () => {
      const account = await makeAccount(context.target, { keys: { sender: ["messages:send"] } })
      const sender = account.keys.sender!.apiKey
      const { conversation, channel } = await makeConversation(context.target, account.ownerKey)
      const text = await send(sender, conversation.id, { type: "text", text: "Your order shipped today." })
      expect(text.status, text.text).toBe(201)
      expect(text.body).toMatchObject({
        conversation_id: conversation.id,
        lead_id: conversation.lead_id,
        channel_id: channel.id,
        direction: "outbound",
        type: "text",
        text: "Your order shipped today.",
        template: null,
        status: "queued",
        error: null,
        external_id: null,
        sender_type: "user",
        sender_id: account.ownerUserId
      })
      const template = await send(sender, conversation.id, {
        type: "template",
        template: { name: "order_shipped", language: "en_US", components: [{ type: "body", parameters: [] }] }
      })
      expect(template.status, template.text).toBe(201)
      expect(template.body.template).toEqual({
        name: "order_shipped",
        language: "en_US",
        components: [{ type: "body", parameters: [] }]
      })
      const read = await call(context.target, "GET", `/api/v1/messages/${text.body.id}`, { auth: sender })
      // The sender may have handed it on meanwhile: all but the delivery state is as answered.
      const {
        status: _s,
        external_id: _e,
        sent_at: _sa,
        delivered_at: _da,
        read_at: _ra,
        updated_at: _u,
        provider_timestamp: _p,
        ...fixed
      } = text.body
      expect(read.body).toMatchObject(fixed)
      expect(await usage(account.ownerKey)).toEqual({ messages_used: 2, messages_limit: 1000 })
    })

    it("refuses free text to a lead who never wrote (409), but sends a template; to a lead by id, on its only channel", async () => {
      const account = await makeAccount(context.target)
      const channel = await createChannel(context.target, account.ownerKey)
      const lead = await call(context.target, "POST", "/api/v1/leads", {
        auth: account.ownerKey,
        json: { name: "Cold Lead", phone: "+14155550123" }
      })
      const text = await call(context.target, "POST", "/api/v1/messages", {
        auth: account.ownerKey,
        json: { type: "text", text: "Hi!", lead_id: lead.body.id }
      })
      expect(text.status).toBe(409)
      expect(text.body).toEqual({
        error: "The customer has not written in the last 24 hours; send a template",
        code: "customer_service_window_closed"
      })
      const template = await call(context.target, "POST", "/api/v1/messages", {
        auth: account.ownerKey,
        json: { ...TEMPLATE_SEND, lead_id: lead.body.id }
      })
      expect(template.status, template.text).toBe(201)
      expect(template.body).toMatchObject({ channel_id: channel.id, lead_id: lead.body.id, status: "queued" })
      const conversation = await call(context.target, "GET", `/api/v1/conversations/${template.body.conversation_id}`, {
        auth: account.ownerKey
      })
      expect(conversation.body).toMatchObject({ status: "pending", lead_id: lead.body.id, last_inbound_at: null })
      expect((await usage(account.ownerKey)).messages_used).toBe(1)
    })

    it("names bad references and bad bodies in details, and counts nothing", async () => {
      const account = await makeAccount(context.target)
      const { conversation } = await makeConversation(context.target, account.ownerKey)
      const unknownLead = await call(context.target, "POST", "/api/v1/messages", {
        auth: account.ownerKey,
        json: { ...TEMPLATE_SEND, lead_id: "ld_00000000000000000000000000" }
      })
      expect(unknownLead.status).toBe(400)
      expect(unknownLead.body.details).toEqual([{ path: "lead_id", message: "no such lead in this account" }])
      for (const [body, path] of [
        [{ type: "sms", text: "x" }, "type"],
        [{ type: "text" }, "text"],
        [{ type: "text", text: "x".repeat(4097) }, "text"],
        [{ type: "template", template: { name: "Bad Name", language: "en_US" } }, "template.name"]
      ] as const) {
        const reply = await send(account.ownerKey, conversation.id, body)
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details.map((d: { path: string }) => d.path)).toContain(path)
      }
      expect((await usage(account.ownerKey)).messages_used).toBe(0)
    })

    it("answers 409 for a disabled channel, 404 for another account's conversation, 403 for a read-only key", async () => {
      const account = await makeAccount(context.target, { keys: { reader: ["conversations:read"] } })
      const { conversation, channel } = await makeConversation(context.target, account.ownerKey)
      const reader = await send(account.keys.reader!.apiKey, conversation.id, TEMPLATE_SEND)
      expect(reader.status).toBe(403)
      expect(reader.body).toEqual(forbidden("messages:send"))
      const foreign = await send(context.other.ownerKey, conversation.id, TEMPLATE_SEND)
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual({ error: `No conversation with id ${conversation.id}`, code: "not_found" })
      await call(context.target, "PATCH", `/api/v1/channels/${channel.id}`, {
        auth: account.ownerKey,
        json: { status: "disabled" }
      })
      const disabled = await send(account.ownerKey, conversation.id, TEMPLATE_SEND)
      expect(disabled.status).toBe(409)
      expect(disabled.body).toEqual({ error: "The channel is disabled", code: "conflict" })
      expect((await usage(account.ownerKey)).messages_used).toBe(0)
    })

    it("accepts exactly the sends left under the plan's limit when 20 race for 5, then 402", async () => {
      const account = await makeAccount(context.target)
      const { conversation } = await makeConversation(context.target, account.ownerKey)
      // 995 of the free plan's 1,000, in parallel batches.
      for (let sent = 0; sent < 995; sent += 25) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(25, 995 - sent) }, () => send(account.ownerKey, conversation.id, TEMPLATE_SEND))
        )
        expect(batch.filter((reply) => reply.status !== 201).map((reply) => `${reply.status} ${reply.text}`)).toEqual(
          []
        )
      }
      const race = await Promise.all(
        Array.from({ length: 20 }, () => send(account.ownerKey, conversation.id, TEMPLATE_SEND))
      )
      expect(race.filter((reply) => reply.status === 201)).toHaveLength(5)
      const refused = race.filter((reply) => reply.status === 402)
      expect(refused).toHaveLength(15)
      expect(refused[0]!.body).toEqual({
        error: "Monthly message limit reached: 1000 of 1000 on plan free",
        code: "message_limit_reached"
      })
      expect(await usage(account.ownerKey)).toEqual({ messages_used: 1000, messages_limit: 1000 })
      const listed = await call(context.target, "GET", `/api/v1/conversations/${conversation.id}/messages?limit=1`, {
        auth: account.ownerKey
      })
      // The inbound message that opened the conversation, and the 1,000 sends.
      expect(listed.body.meta.total).toBe(1001)
      // A thousand sends through the embedded database, with the sender at work beside them, take a while.
    }, 180_000)
  })

  describe("operator", () => {
    it("moves an account to another plan: the new limit holds from the next send", async () => {
      const account = await makeAccount(context.target)
      const moved = await call(context.target, "PATCH", `/admin/v1/accounts/${account.accountId}`, {
        auth: context.target.adminToken,
        json: { plan_id: "pro" }
      })
      expect(moved.status, moved.text).toBe(200)
      expect(moved.body).toEqual({ account_id: account.accountId, plan_id: "pro" })
      const usage = await call(context.target, "GET", "/api/usage", { auth: account.ownerKey })
      expect(usage.body).toEqual({
        usage: { messages_used: 0, messages_limit: 10000 },
        subscription: { plan_id: "pro", status: "active" }
      })
      const unknown = await call(context.target, "PATCH", "/admin/v1/accounts/00000000-0000-4000-8000-000000000000", {
        auth: context.target.adminToken,
        json: { plan_id: "pro" }
      })
      expect(unknown.status).toBe(404)
      const bad = await call(context.target, "PATCH", `/admin/v1/accounts/${account.accountId}`, {
        auth: context.target.adminToken,
        json: { plan_id: "platinum" }
      })
      expect(bad.status).toBe(400)
    })

    it("plays a customer writing in through the simulator, as WhatsApp would deliver it", async () => {
      const account = await makeAccount(context.target)
      const channel = await createChannel(context.target, account.ownerKey)
      const played = await call(context.target, "POST", "/admin/v1/simulator/whatsapp/inbound", {
        auth: context.target.adminToken,
        json: { phone_number_id: channel.phone_number_id, from: "+14155550142", name: "Grace", text: "Is it in stock?" }
      })
      expect(played.status, played.text).toBe(202)
      expect(played.body.external_id).toMatch(/^wamid\.SIM/)
      const [conversation] = (
        await call(context.target, "GET", `/api/v1/conversations?channel_id=${channel.id}`, { auth: account.ownerKey })
      ).body.conversations
      expect(conversation).toMatchObject({ status: "open", contact_wa_id: "14155550142" })
      const messages = await call(context.target, "GET", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: account.ownerKey
      })
      expect(messages.body.messages).toMatchObject([
        { direction: "inbound", text: "Is it in stock?", external_id: played.body.external_id }
      ])
      // The customer wrote: a free-form reply may go now.
      const reply = await call(context.target, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: account.ownerKey,
        json: { type: "text", text: "Yes, two left." }
      })
      expect(reply.status, reply.text).toBe(201)
    })
  })

  describe("conversation inbox rows", () => {
    it("names the lead, previews the last message and counts the unread until the thread is marked read", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const { conversation, channel, from } = await makeConversation(context.target, key, "Hello there")
      const one = async () => {
        const reply = await call(context.target, "GET", `/api/v1/conversations/${conversation.id}`, { auth: key })
        expect(reply.status, reply.text).toBe(200)
        return reply.body
      }
      const listed = await call(context.target, "GET", "/api/v1/conversations", { auth: key })
      expect(listed.body.conversations).toHaveLength(1)
      expect(listed.body.conversations[0]).toMatchObject({
        id: conversation.id,
        lead: { id: conversation.lead_id, name: "Ada Customer", phone: `+${from}` },
        last_message: { direction: "inbound", type: "text", text: "Hello there", status: "received" },
        unread_count: 1
      })
      expect(await one()).toEqual(listed.body.conversations[0])
      // A long text with line breaks: one line, cut to 140 characters.
      const long = `First line\n${"word ".repeat(60)}`
      const inbound = MetaPayloads.inboundTextPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from,
        name: null,
        text: long,
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date(channel.created_at as string)
      })
      expect((await postWebhook(context.target, inbound)).status).toBe(200)
      const twice = await one()
      expect(twice.unread_count).toBe(2)
      expect(twice.last_message.text).toHaveLength(140)
      expect(twice.last_message.text).toMatch(/^First line word word .*…$/)
      const read = await call(context.target, "POST", `/api/v1/conversations/${conversation.id}/read`, { auth: key })
      expect(read.status, read.text).toBe(200)
      expect((await one()).unread_count).toBe(0)
      // Our answer moves the preview, not the count; a template is named by its label.
      const sent = await call(context.target, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: key,
        json: TEMPLATE_SEND
      })
      expect(sent.status, sent.text).toBe(201)
      expect(await one()).toMatchObject({
        unread_count: 0,
        last_message: { id: sent.body.id, direction: "outbound", type: "template", text: "Template hello_world" }
      })
      const lead = await call(context.target, "POST", "/api/v1/leads", {
        auth: key,
        json: { name: "Grace Hopper", phone: "+14155550177" }
      })
      const silent = await call(context.target, "POST", "/api/v1/messages", {
        auth: key,
        json: { ...TEMPLATE_SEND, lead_id: lead.body.id, channel_id: channel.id }
      })
      expect(silent.status, silent.text).toBe(201)
      const both = await call(context.target, "GET", `/api/v1/conversations?channel_id=${channel.id}`, { auth: key })
      const started = both.body.conversations.find((c: { id: string }) => c.id === silent.body.conversation_id)
      expect(started).toMatchObject({
        lead: { id: lead.body.id, name: "Grace Hopper", phone: "+14155550177" },
        last_message: { direction: "outbound", text: "Template hello_world" },
        unread_count: 0
      })
    })

    it("filters by status and assignee, answers a change with the row, and names a bad parameter", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const { conversation } = await makeConversation(context.target, key)
      const other = (await makeConversation(context.target, key)).conversation
      const ids = async (query: string) => {
        const reply = await call(context.target, "GET", `/api/v1/conversations?${query}`, { auth: key })
        expect(reply.status, reply.text).toBe(200)
        return (reply.body.conversations as Array<{ id: string }>).map((c) => c.id).sort()
      }
      const assigned = await call(context.target, "PATCH", `/api/v1/conversations/${conversation.id}`, {
        auth: key,
        json: { assigned_user_id: account.ownerUserId, status: "resolved" }
      })
      expect(assigned.status, assigned.text).toBe(200)
      expect(assigned.body).toMatchObject({
        status: "resolved",
        assigned_user_id: account.ownerUserId,
        lead: { id: conversation.lead_id, name: "Ada Customer" },
        last_message: { direction: "inbound" },
        unread_count: 1
      })
      expect(await ids(`assigned_user_id=${account.ownerUserId}`)).toEqual([conversation.id])
      expect(await ids("assigned_user_id=none")).toEqual([other.id])
      expect(await ids("status=resolved")).toEqual([conversation.id])
      expect(await ids("status=open")).toEqual([other.id])
      expect(await ids(`status=open&assigned_user_id=${account.ownerUserId}`)).toEqual([])
      for (const [query, path] of [
        ["status=closed", "status"],
        ["assigned_user_id=%00", "assigned_user_id"],
        ["unassigned=true", "unassigned"]
      ] as const) {
        const refused = await call(context.target, "GET", `/api/v1/conversations?${query}`, { auth: key })
        expect(refused.status, `${query}: ${refused.text}`).toBe(400)
        expect(
          refused.body.details.map((detail: { path: string }) => detail.path),
          query
        ).toContain(path)
      }
    })
  })

  describe("conversation changes", () => {
    it("resolves, snoozes until a time, assigns and unassigns; a new inbound message reopens it", async () => {
      const { conversation, channel, from } = await makeConversation(context.target, context.acme.ownerKey)
      const patch = (json: unknown, key = context.acme.ownerKey) =>
        call(context.target, "PATCH", `/api/v1/conversations/${conversation.id}`, { auth: key, json })
      const resolved = await patch({ status: "resolved", assigned_user_id: context.acme.ownerUserId })
      expect(resolved.status, resolved.text).toBe(200)
      expect(resolved.body).toMatchObject({
        status: "resolved",
        assigned_user_id: context.acme.ownerUserId,
        snoozed_until: null
      })
      const later = new Date(Date.parse(channel.created_at as string) + 3_600_000).toISOString()
      const snoozed = await patch({ status: "snoozed", snoozed_until: later, assigned_user_id: null })
      expect(snoozed.body).toMatchObject({ status: "snoozed", snoozed_until: later, assigned_user_id: null })
      const onlySnoozed = await patch({ status: "open", snoozed_until: later })
      expect(onlySnoozed.status).toBe(400)
      expect(onlySnoozed.body.details).toEqual([{ path: "snoozed_until", message: 'only with status "snoozed"' }])
      const foreignUser = await patch({ assigned_user_id: context.other.ownerUserId })
      expect(foreignUser.status).toBe(400)
      expect(foreignUser.body.details).toEqual([{ path: "assigned_user_id", message: "no such user in this account" }])
      const scoped = await patch({ status: "open" }, context.acme.keys.conversations!.apiKey)
      expect(scoped.status).toBe(403)
      expect(scoped.body).toEqual(forbidden("full access"))
      const inbound = MetaPayloads.inboundTextPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from,
        name: null,
        text: "Still there?",
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date(channel.created_at as string)
      })
      expect((await postWebhook(context.target, inbound)).status).toBe(200)
      const reopened = await call(context.target, "GET", `/api/v1/conversations/${conversation.id}`, {
        auth: context.acme.ownerKey
      })
      expect(reopened.body).toMatchObject({ status: "open", snoozed_until: null })
    })
  })

  describe("lead deletion", () => {
    it("takes the lead's conversations and messages with it", async () => {
      const { conversation } = await makeConversation(context.target, context.acme.ownerKey)
      const sent = await call(context.target, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: context.acme.ownerKey,
        json: TEMPLATE_SEND
      })
      expect(sent.status, sent.text).toBe(201)
      const inbound = (
        await call(context.target, "GET", `/api/v1/conversations/${conversation.id}/messages`, {
          auth: context.acme.ownerKey
        })
      ).body.messages.find((m: { direction: string }) => m.direction === "inbound")
      const deleted = await call(context.target, "DELETE", `/api/v1/leads/${conversation.lead_id}`, {
        auth: context.acme.ownerKey
      })
      expect(deleted.status, deleted.text).toBe(200)
      for (const path of [
        `/api/v1/conversations/${conversation.id}`,
        `/api/v1/conversations/${conversation.id}/messages`,
        `/api/v1/messages/${sent.body.id}`,
        `/api/v1/messages/${inbound.id}`
      ]) {
        expect((await call(context.target, "GET", path, { auth: context.acme.ownerKey })).status, path).toBe(404)
      }
    })
  })

  describe("typed client", () => {
    it("connects a channel, reads the thread and sends through the generated client; a closed window is a typed failure", async () => {
      const { conversation } = await makeConversation(context.target, context.acme.ownerKey)
      const result = await Effect.runPromise(
        Client.make({ baseUrl: context.target.baseUrl, apiKey: context.acme.ownerKey }).pipe(
          Effect.flatMap((client) =>
            Effect.gen(function* () {
              const thread = yield* client.conversations.get({ params: { id: conversation.id } })
              const sent = yield* client.conversations.send({
                params: { id: conversation.id },
                payload: { type: "template", template: { name: "hello_world", language: "en_US" } },
                headers: {}
              })
              const page = yield* client.conversations.messages({ params: { id: conversation.id }, query: {} })
              const channels = yield* client.channels.list({ query: {} })
              const cold = yield* client.leads.create({ payload: { name: "Cold", phone: "+14155550166" }, headers: {} })
              const refused = yield* Effect.flip(
                client.messages.send({
                  payload: { type: "text", text: "Hi", lead_id: cold.id, channel_id: thread.channel_id },
                  headers: {}
                })
              )
              return { thread, sent, page, channels, refused }
            })
          ),
          Effect.provide(FetchHttpClient.layer)
        )
      )
      expect(result.thread.id).toBe(conversation.id)
      expect(result.sent).toMatchObject({ conversation_id: conversation.id, status: "queued", type: "template" })
      expect(result.page.messages.map((m) => m.id)).toContain(result.sent.id)
      expect(result.channels.channels.map((c) => c.id)).toContain(result.thread.channel_id)
      expect(result.refused._tag).toBe("WindowClosed")
      expect(result.refused).toMatchObject({ code: "customer_service_window_closed" })
    })
  })
}

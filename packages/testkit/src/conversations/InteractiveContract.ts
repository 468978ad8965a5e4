import { describe, expect, it } from "vitest"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { makeAccount, makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { until } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import { makeConversation, postWebhook, TEMPLATE_SEND } from "./ConversationsResource.ts"
import { BAD_REACTIONS, BAD_SENDS, BUTTONS, interactive, LIST } from "./InteractiveBodies.ts"

/**
 * Interactive messages, reactions, read receipts and replies (docs/contract-messaging.md §5.4 to
 * §5.7), as any target answers them, whichever transport it sends through.
 */
export const contract = (context: ContractContext) => {
  describe("interactive messages, reactions and read receipts", () => {
    const post = (key: string, path: string, json?: unknown) => call(context.target, "POST", path, { auth: key, json })
    const get = async (key: string, path: string) => {
      const reply = await call(context.target, "GET", path, { auth: key })
      expect(reply.status, reply.text).toBe(200)
      return reply.body
    }
    const used = async (key: string) => (await get(key, "/api/usage")).usage.messages_used as number

    it("queues reply buttons and a list as given, inside the window, and counts them", async () => {
      const account = await makeAccount(context.target, { keys: { sender: ["messages:send"] } })
      const sender = account.keys.sender!.apiKey
      const { conversation } = await makeConversation(context.target, account.ownerKey)
      for (const content of [BUTTONS, LIST]) {
        const reply = await post(sender, `/api/v1/conversations/${conversation.id}/messages`, interactive(content))
        expect(reply.status, reply.text).toBe(201)
        expect(reply.body).toMatchObject({
          conversation_id: conversation.id,
          direction: "outbound",
          type: "interactive",
          text: null,
          template: null,
          interactive: content,
          reply_to: null,
          status: "queued"
        })
        expect((await get(sender, `/api/v1/messages/${reply.body.id}`)).interactive).toEqual(content)
      }
      expect(await used(account.ownerKey)).toBe(2)
    })

    it("refuses every broken interactive body with a 400 naming the field, and stores and counts nothing", async () => {
      const account = await makeAccount(context.target)
      const { conversation } = await makeConversation(context.target, account.ownerKey)
      const path = `/api/v1/conversations/${conversation.id}/messages`
      for (const [what, body, field] of BAD_SENDS) {
        const reply = await post(account.ownerKey, path, body)
        expect(reply.status, `${what}: ${reply.text}`).toBe(400)
        expect(reply.body.code, what).toBe("validation_error")
        expect(
          reply.body.details.map((detail: { path: string }) => detail.path),
          what
        ).toContain(field)
      }
      expect(await used(account.ownerKey)).toBe(0)
      expect((await get(account.ownerKey, path)).messages).toHaveLength(1)
    })

    it("links an inbound reply to the message it answers, and reacts to it", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const { conversation, channel, from } = await makeConversation(context.target, key)
      const question = await post(key, `/api/v1/conversations/${conversation.id}/messages`, interactive(BUTTONS))
      expect(question.status, question.text).toBe(201)
      const { external_id: wamid } = await until(
        () => get(key, `/api/v1/messages/${question.body.id}`),
        (message) => message.external_id !== null,
        15_000
      )
      const answer = MetaPayloads.inboundInteractiveReplyPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from,
        name: null,
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date((await get(key, `/api/v1/conversations/${conversation.id}`)).last_inbound_at),
        repliesTo: wamid,
        reply: { type: "list_reply", id: "tomorrow-am", title: "Morning", description: "8:00 to 12:00" }
      })
      expect((await postWebhook(context.target, answer)).status).toBe(200)
      const [newest] = (await get(key, `/api/v1/conversations/${conversation.id}/messages?limit=1`)).messages
      expect(newest).toMatchObject({
        direction: "inbound",
        type: "interactive",
        text: "Morning",
        reply_to: { message_id: question.body.id, external_id: wamid }
      })
      expect(newest.provider_payload.interactive.list_reply).toEqual({
        id: "tomorrow-am",
        title: "Morning",
        description: "8:00 to 12:00"
      })

      const before = await used(key)
      for (const [what, body] of BAD_REACTIONS) {
        const refused = await post(key, `/api/v1/messages/${newest.id}/reactions`, body)
        expect(refused.status, `${what}: ${refused.text}`).toBe(400)
        expect(refused.body.details.map((detail: { path: string }) => detail.path)).toContain("emoji")
      }
      const elsewhere = await post(context.other.ownerKey, `/api/v1/messages/${newest.id}/reactions`, { emoji: "👍" })
      expect(elsewhere.status, elsewhere.text).toBe(404)
      expect(await used(key)).toBe(before)
      const reaction = await post(key, `/api/v1/messages/${newest.id}/reactions`, { emoji: "👍" })
      expect(reaction.status, reaction.text).toBe(201)
      expect(reaction.body).toMatchObject({
        conversation_id: conversation.id,
        direction: "outbound",
        type: "reaction",
        text: "👍",
        reply_to: { message_id: newest.id, external_id: newest.external_id },
        status: "queued"
      })
      expect(await used(key)).toBe(before + 1)
      const onReaction = await post(key, `/api/v1/messages/${reaction.body.id}/reactions`, { emoji: "👍" })
      expect(onReaction.status, onReaction.text).toBe(409)
    })

    it("has nothing to mark read where the lead never wrote; needs messages:send; 404 across accounts", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const { conversation, channel } = await makeConversation(context.target, key)
      const lead = await post(key, "/api/v1/leads", { name: "Silent", phone: "+14155550166" })
      const template = await post(key, "/api/v1/messages", {
        ...TEMPLATE_SEND,
        lead_id: lead.body.id,
        channel_id: channel.id
      })
      expect(template.status, template.text).toBe(201)
      const silent = await post(key, `/api/v1/conversations/${template.body.conversation_id}/read`)
      expect(silent.status, silent.text).toBe(200)
      expect(silent.body).toEqual({ conversation_id: template.body.conversation_id, message_id: null, read_at: null })
      const reader = await makeKey(context.target, account.accountId, { scopes: ["conversations:read"] })
      const forbidden = await post(reader.apiKey, `/api/v1/conversations/${conversation.id}/read`)
      expect(forbidden.status, forbidden.text).toBe(403)
      expect(forbidden.body).toEqual({ error: "Insufficient scope: requires messages:send", code: "forbidden" })
      const elsewhere = await post(context.other.ownerKey, `/api/v1/conversations/${conversation.id}/read`)
      expect(elsewhere.status, elsewhere.text).toBe(404)
    })
  })
}

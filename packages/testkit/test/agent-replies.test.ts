import { beforeAll, describe, expect, it } from "vitest"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { createAgent } from "../src/agents/AgentsResource.ts"
import { createChannel } from "../src/channels/ChannelsResource.ts"
import { nextWaId, postWebhook } from "../src/conversations/ConversationsResource.ts"
import { call } from "../src/Http.ts"
import { sleep, until } from "../src/internal/wire.ts"
import { createSource } from "../src/knowledge/KnowledgeResource.ts"
import * as Wirings from "../src/Wirings.ts"

/**
 * Live replies (issue 14): an enabled agent answers inbound WhatsApp messages, played on the real
 * webhook route and signed as Meta signs them, through the same sender as any message; a handoff
 * leaves the conversation to a person.
 */
for (const [name, wiring] of Wirings.wirings) {
  describe(`agents answering WhatsApp ${name}`, () => {
    const stage = Wirings.stage(wiring)
    const owner = () => stage.account.ownerKey
    let channel: { id: string; phone_number_id: string; created_at?: unknown }
    let agent: { id: string }

    beforeAll(async () => {
      channel = await createChannel(stage.server, owner())
      const source = await createSource(stage.server, owner(), {
        kind: "text",
        title: "Delivery",
        content: "We deliver in Campinas on Saturdays. Delivery costs R$ 12."
      })
      agent = await createAgent(stage.server, owner(), {
        enabled: true,
        knowledge_source_ids: [source.id],
        handoff: { keywords: ["human"] }
      })
    })

    /** A customer's text, as Meta would post it: the same bytes each time it is called with the same wamid. */
    const inbound = (from: string, text: string, wamid = `wamid.${crypto.randomUUID()}`) =>
      MetaPayloads.inboundTextPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from,
        name: "Ada Customer",
        text,
        externalId: wamid,
        timestamp: new Date(channel.created_at as string)
      })

    const conversationOf = async (from: string) => {
      const list = await call(stage.server, "GET", `/api/v1/conversations?channel_id=${channel.id}&limit=100`, {
        auth: owner()
      })
      const lead = await call(stage.server, "GET", `/api/v1/leads?limit=100`, { auth: owner() })
      const leadId = lead.body.leads.find((l: { phone: string }) => l.phone === `+${from}`)?.id
      return list.body.conversations.find((c: { lead_id: string }) => c.lead_id === leadId)
    }
    const messagesOf = async (conversationId: string) =>
      (await call(stage.server, "GET", `/api/v1/conversations/${conversationId}/messages`, { auth: owner() })).body
        .messages as ReadonlyArray<Record<string, any>>

    it("answers a message once, however often Meta delivers it, as the agent, through the sender", async () => {
      const endpoint = stage.receiver.endpoint(`/agent-sent-${name.replace(" ", "-")}`)
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: owner(),
        json: { url: endpoint.url, events: ["message.sent"] }
      })
      endpoint.setSecret(registered.body.secret)
      const from = nextWaId()
      const raw = inbound(from, "Do you deliver to Campinas?")
      const replies = await Promise.all([postWebhook(stage.server, raw), postWebhook(stage.server, raw)])
      replies.push(await postWebhook(stage.server, raw))
      expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200])

      const [sent] = await endpoint.waitFor(1, 10_000)
      const event = JSON.parse(sent!.body)
      expect(event.data).toMatchObject({
        direction: "outbound",
        type: "text",
        text: "We deliver in Campinas on Saturdays. Delivery costs R$ 12.",
        sender_type: "agent",
        sender_id: agent.id,
        status: "sent"
      })
      await sleep(700)
      expect(endpoint.requests()).toHaveLength(1)
      const conversation = await conversationOf(from)
      const thread = await messagesOf(conversation.id)
      expect(thread.map((m) => [m.direction, m.sender_type, m.text])).toEqual([
        ["outbound", "agent", "We deliver in Campinas on Saturdays. Delivery costs R$ 12."],
        ["inbound", "lead", "Do you deliver to Campinas?"]
      ])
      expect(conversation.handoff).toBeNull()
    })

    it("hands off on a keyword: no reply, the conversation marked for a person, until it is resolved", async () => {
      const from = nextWaId()
      expect((await postWebhook(stage.server, inbound(from, "Can I talk to a human please?"))).status).toBe(200)
      const conversation = await until(
        () => conversationOf(from),
        (c) => c?.handoff != null,
        10_000
      )
      expect(conversation.handoff).toMatchObject({ agent_id: agent.id, reason: "keyword" })
      // Held by a person now: the agent stays out of it.
      expect((await postWebhook(stage.server, inbound(from, "Hello? Do you deliver to Campinas?"))).status).toBe(200)
      await sleep(700)
      expect((await messagesOf(conversation.id)).filter((m) => m.direction === "outbound")).toEqual([])
      // Resolving gives it back: the customer's next message is the agent's again.
      const resolved = await call(stage.server, "PATCH", `/api/v1/conversations/${conversation.id}`, {
        auth: owner(),
        json: { status: "resolved" }
      })
      expect([resolved.status, resolved.body.handoff]).toEqual([200, null])
      expect((await postWebhook(stage.server, inbound(from, "Do you deliver to Campinas?"))).status).toBe(200)
      const answered = await until(
        () => messagesOf(conversation.id),
        (thread) => thread.some((m) => m.sender_type === "agent"),
        10_000
      )
      expect(answered.filter((m) => m.sender_type === "agent").map((m) => m.text)).toEqual([
        "We deliver in Campinas on Saturdays. Delivery costs R$ 12."
      ])
    })

    it("does not answer an opt-out or opt-in keyword: the lead asked for silence, not a reply", async () => {
      const from = nextWaId()
      expect((await postWebhook(stage.server, inbound(from, "Stop"))).status).toBe(200)
      expect((await postWebhook(stage.server, inbound(from, "START"))).status).toBe(200)
      const conversation = await until(
        () => conversationOf(from),
        (c) => c !== undefined,
        10_000
      )
      await sleep(700)
      const thread = await messagesOf(conversation.id)
      expect(thread.map((m) => [m.direction, m.text])).toEqual([
        ["inbound", "START"],
        ["inbound", "Stop"]
      ])
      // The next question is answered as before.
      expect((await postWebhook(stage.server, inbound(from, "Do you deliver to Campinas?"))).status).toBe(200)
      const answered = await until(
        () => messagesOf(conversation.id),
        (messages) => messages.some((m) => m.sender_type === "agent"),
        10_000
      )
      expect(answered.filter((m) => m.sender_type === "agent")).toHaveLength(1)
    })

    it("leaves a conversation a person is assigned to alone", async () => {
      const from = nextWaId()
      expect((await postWebhook(stage.server, inbound(from, "zzyzx"))).status).toBe(200)
      // No knowledge: handed off, no reply.
      const conversation = await until(
        () => conversationOf(from),
        (c) => c?.handoff != null,
        10_000
      )
      expect(conversation.handoff.reason).toBe("no_knowledge")
      const me = await call(stage.server, "GET", "/api/me", { auth: owner() })
      const assigned = await call(stage.server, "PATCH", `/api/v1/conversations/${conversation.id}`, {
        auth: owner(),
        json: { assigned_user_id: me.body.account.user_id, handoff: null }
      })
      expect([assigned.status, assigned.body.handoff], assigned.text).toEqual([200, null])
      expect((await postWebhook(stage.server, inbound(from, "Do you deliver to Campinas?"))).status).toBe(200)
      await sleep(700)
      expect((await messagesOf(conversation.id)).filter((m) => m.direction === "outbound")).toEqual([])
    })
  })
}

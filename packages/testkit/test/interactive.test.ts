import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as CloudTransport from "@leadline/whatsapp-adapter/cloud/CloudTransport"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { makeKey } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { createChannel } from "../src/channels/ChannelsResource.ts"
import { makeConversation, postWebhook, TEMPLATE_SEND } from "../src/conversations/ConversationsResource.ts"
import { until } from "../src/internal/wire.ts"
import * as MockGraph from "../src/whatsapp/MockGraph.ts"
import * as Wirings from "../src/Wirings.ts"
import {
  BAD_REACTIONS,
  BAD_SENDS,
  BUTTONS,
  interactive,
  LIST,
  withButtons,
  x
} from "../src/conversations/InteractiveBodies.ts"

/**
 * Interactive messages, reactions, read receipts and replies (docs/contract-messaging.md §5.4 to
 * §5.7), on every store: through the Cloud API transport against a mock Graph server (the bodies
 * WhatsApp gets, asserted whole), and through the simulator as the README's walk-through plays it.
 */

const waitUntil = <A>(probe: () => Promise<A>, done: (value: A) => boolean) => until(probe, done, 15_000)

// One mock Graph for the file: the servers below send through it.
const graph = await MockGraph.start()
afterAll(() => graph.close())

for (const [name, wiring] of Wirings.wirings) {
  describe(`interactive messages, reactions and read receipts through the Cloud API ${name}`, () => {
    const stage = Wirings.stage(wiring, {
      messaging: {
        transport: CloudTransport.layer({ baseUrl: graph.url, timeoutMillis: 2_000 }),
        senderOptions: { pollMillis: 100 }
      }
    })
    let thread: Awaited<ReturnType<typeof makeConversation>>

    const owner = () => stage.account.ownerKey
    const get = async (path: string) => {
      const reply = await call(stage.server, "GET", path, { auth: owner() })
      expect(reply.status, reply.text).toBe(200)
      return reply.body
    }
    const used = async () => (await get("/api/usage")).usage.messages_used as number
    const threadMessages = async () => (await get(`/api/v1/conversations/${thread.conversation.id}/messages`)).messages
    const postFor = (id: string) =>
      waitUntil(
        async () =>
          graph
            .requests()
            .find((r) => (r.body as { biz_opaque_callback_data?: string }).biz_opaque_callback_data === id),
        (request) => request !== undefined
      ).then((request) => request!)
    const sent = (id: string) =>
      waitUntil(
        () => get(`/api/v1/messages/${id}`),
        (message) => message.status !== "queued"
      )
    const send = async (body: unknown) => {
      const reply = await call(stage.server, "POST", `/api/v1/conversations/${thread.conversation.id}/messages`, {
        auth: owner(),
        json: body
      })
      expect(reply.status, reply.text).toBe(201)
      return reply.body
    }
    /** The customer's first message, which opened the thread. */
    const firstInbound = async () => {
      const inbound = (await threadMessages()).find((m: { text: string }) => m.text === "Hello there")
      return inbound as { id: string; external_id: string }
    }

    beforeAll(async () => {
      thread = await makeConversation(stage.server, stage.account.ownerKey)
    })

    it("sends reply buttons and a list as WhatsApp documents them, stored as given", async () => {
      const before = await used()
      const buttons = await send(interactive(BUTTONS))
      expect(buttons).toMatchObject({
        type: "interactive",
        direction: "outbound",
        status: "queued",
        text: null,
        template: null,
        interactive: BUTTONS,
        reply_to: null
      })
      const list = await send(interactive(LIST))
      expect(list.interactive).toEqual(LIST)
      for (const [message, content] of [
        [buttons, BUTTONS],
        [list, LIST]
      ] as const) {
        const request = await postFor(message.id)
        expect(`${request.method} ${request.path}`).toBe(`POST /v24.0/${thread.channel.phone_number_id}/messages`)
        expect(request.body).toEqual({
          messaging_product: "whatsapp",
          recipient_type: "individual",
          to: thread.from,
          type: "interactive",
          interactive: content,
          biz_opaque_callback_data: message.id
        })
        expect(await sent(message.id)).toMatchObject({ status: "sent", external_id: request.messageId })
      }
      // Session messages count as any message does (docs/contract-messaging.md §10).
      expect(await used()).toBe(before + 2)
    })

    it("refuses every broken interactive body with a 400 naming the field, and changes nothing", async () => {
      const before = { used: await used(), messages: (await threadMessages()).length, posts: graph.requests().length }
      for (const [what, body, path] of BAD_SENDS) {
        const reply = await call(stage.server, "POST", `/api/v1/conversations/${thread.conversation.id}/messages`, {
          auth: owner(),
          json: body
        })
        expect(reply.status, `${what}: ${reply.text}`).toBe(400)
        expect(reply.body.code, what).toBe("validation_error")
        expect(
          reply.body.details.map((detail: { path: string }) => detail.path),
          what
        ).toContain(path)
      }
      // The same rules to a lead.
      const toLead = await call(stage.server, "POST", "/api/v1/messages", {
        auth: owner(),
        json: { ...interactive(withButtons([])), lead_id: thread.conversation.lead_id }
      })
      expect(toLead.status, toLead.text).toBe(400)
      expect(toLead.body.details.map((detail: { path: string }) => detail.path)).toContain("interactive.action.buttons")
      expect(await used()).toBe(before.used)
      expect((await threadMessages()).length).toBe(before.messages)
      expect(graph.requests().length).toBe(before.posts)
    })

    it("keeps interactive messages inside the 24-hour window, as text", async () => {
      const lead = await call(stage.server, "POST", "/api/v1/leads", {
        auth: owner(),
        json: { name: "Never wrote", phone: "+14155550142" }
      })
      const reply = await call(stage.server, "POST", "/api/v1/messages", {
        auth: owner(),
        json: { ...interactive(BUTTONS), lead_id: lead.body.id, channel_id: thread.channel.id }
      })
      expect(reply.status, reply.text).toBe(409)
      expect(reply.body.code).toBe("customer_service_window_closed")
    })

    it("links an inbound reply to the message it answers by WhatsApp's context, for every type", async () => {
      const question = await send(interactive(BUTTONS))
      const wamid = (await postFor(question.id)).messageId!
      await sent(question.id)
      const at = new Date((await get(`/api/v1/conversations/${thread.conversation.id}`)).last_inbound_at)
      const common = {
        phoneNumberId: thread.channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from: thread.from,
        name: null,
        timestamp: at
      }
      const posts = [
        MetaPayloads.inboundInteractiveReplyPayload({
          ...common,
          externalId: `wamid.${crypto.randomUUID()}`,
          repliesTo: wamid,
          reply: { type: "button_reply", id: "keep", title: "Keep it" }
        }),
        MetaPayloads.inboundTextPayload({
          ...common,
          externalId: `wamid.${crypto.randomUUID()}`,
          text: "About this one",
          repliesTo: wamid
        }),
        MetaPayloads.inboundTextPayload({
          ...common,
          externalId: `wamid.${crypto.randomUUID()}`,
          text: "About something sent elsewhere",
          repliesTo: "wamid.NOT-OURS"
        })
      ]
      for (const raw of posts) expect((await postWebhook(stage.server, raw)).status).toBe(200)
      const reaction = MetaPayloads.messagesChangePayload(thread.channel.phone_number_id, "16505551111", {
        contacts: [{ profile: {}, wa_id: thread.from }],
        messages: [
          {
            from: thread.from,
            id: `wamid.${crypto.randomUUID()}`,
            timestamp: String(Math.floor(at.getTime() / 1000)),
            type: "reaction",
            reaction: { message_id: wamid, emoji: "❤️" }
          }
        ]
      })
      expect((await postWebhook(stage.server, reaction)).status).toBe(200)
      const inbound = (await threadMessages()).filter((m: { direction: string }) => m.direction === "inbound")
      const answered = { message_id: question.id, external_id: wamid }
      const byText = (text: string) => inbound.find((m: { text: string }) => m.text === text)
      expect(byText("Keep it")).toMatchObject({ type: "interactive", reply_to: answered })
      expect(byText("About this one")).toMatchObject({ type: "text", reply_to: answered })
      expect(byText("About something sent elsewhere")).toMatchObject({ type: "text", reply_to: null })
      expect(byText("❤️")).toMatchObject({ type: "reaction", reply_to: answered })
      // The item as WhatsApp sent it is kept too.
      expect(byText("Keep it").provider_payload.interactive).toEqual({
        type: "button_reply",
        button_reply: { id: "keep", title: "Keep it" }
      })
    })

    it("reacts to a message (and takes the reaction back) with WhatsApp's reaction body", async () => {
      const target = await firstInbound()
      const before = await used()
      const reply = await call(stage.server, "POST", `/api/v1/messages/${target.id}/reactions`, {
        auth: owner(),
        json: { emoji: "👍" }
      })
      expect(reply.status, reply.text).toBe(201)
      expect(reply.body).toMatchObject({
        type: "reaction",
        direction: "outbound",
        status: "queued",
        text: "👍",
        conversation_id: thread.conversation.id,
        reply_to: { message_id: target.id, external_id: target.external_id },
        interactive: null
      })
      const removal = await call(stage.server, "POST", `/api/v1/messages/${target.id}/reactions`, {
        auth: owner(),
        json: { emoji: "" }
      })
      expect(removal.status, removal.text).toBe(201)
      expect(removal.body).toMatchObject({ type: "reaction", text: null })
      for (const [message, emoji] of [
        [reply.body, "👍"],
        [removal.body, ""]
      ] as const) {
        expect((await postFor(message.id)).body).toEqual({
          messaging_product: "whatsapp",
          recipient_type: "individual",
          to: thread.from,
          type: "reaction",
          reaction: { message_id: target.external_id, emoji },
          biz_opaque_callback_data: message.id
        })
        expect((await sent(message.id)).status).toBe("sent")
      }
      expect(await used()).toBe(before + 2)
    })

    it("refuses reactions it cannot send: a 400 naming emoji, 404, 409, and changes nothing", async () => {
      const target = await firstInbound()
      const before = { used: await used(), messages: (await threadMessages()).length, posts: graph.requests().length }
      for (const [what, body] of BAD_REACTIONS) {
        const reply = await call(stage.server, "POST", `/api/v1/messages/${target.id}/reactions`, {
          auth: owner(),
          json: body
        })
        expect(reply.status, `${what}: ${reply.text}`).toBe(400)
        expect(
          reply.body.details.map((detail: { path: string }) => detail.path),
          what
        ).toContain("emoji")
      }
      const unknown = await call(stage.server, "POST", "/api/v1/messages/msg_00000000000000000000000000/reactions", {
        auth: owner(),
        json: { emoji: "👍" }
      })
      expect(unknown.status, unknown.text).toBe(404)
      const reaction = (await threadMessages()).find((m: { type: string }) => m.type === "reaction")
      const onReaction = await call(stage.server, "POST", `/api/v1/messages/${reaction.id}/reactions`, {
        auth: owner(),
        json: { emoji: "👍" }
      })
      expect(onReaction.status, onReaction.text).toBe(409)
      expect(onReaction.body.code).toBe("conflict")
      expect(await used()).toBe(before.used)
      expect((await threadMessages()).length).toBe(before.messages)
      expect(graph.requests().length).toBe(before.posts)
    })

    it("refuses a reaction to a message WhatsApp never took, and outside the window", async () => {
      const lead = await call(stage.server, "POST", "/api/v1/leads", {
        auth: owner(),
        json: { name: "Template only", phone: "+14155550177" }
      })
      // WhatsApp refuses the first (no wamid), takes the second (a wamid, but the lead never wrote).
      graph.script(MockGraph.Reply.graphError(400, 131026))
      const ids: Array<string> = []
      for (let i = 0; i < 2; i++) {
        const made = await call(stage.server, "POST", "/api/v1/messages", {
          auth: owner(),
          json: { ...TEMPLATE_SEND, lead_id: lead.body.id, channel_id: thread.channel.id }
        })
        expect(made.status, made.text).toBe(201)
        ids.push(made.body.id)
        await sent(made.body.id)
      }
      const [refused, taken] = ids
      expect((await get(`/api/v1/messages/${refused}`)).external_id).toBeNull()
      expect((await get(`/api/v1/messages/${taken}`)).external_id).not.toBeNull()
      const noWamid = await call(stage.server, "POST", `/api/v1/messages/${refused}/reactions`, {
        auth: owner(),
        json: { emoji: "👍" }
      })
      expect(noWamid.status, noWamid.text).toBe(409)
      expect(noWamid.body.code).toBe("conflict")
      const closed = await call(stage.server, "POST", `/api/v1/messages/${taken}/reactions`, {
        auth: owner(),
        json: { emoji: "👍" }
      })
      expect(closed.status, closed.text).toBe(409)
      expect(closed.body.code).toBe("customer_service_window_closed")
    })

    it("marks a conversation read: WhatsApp's status read on the latest inbound message, once", async () => {
      const latest = (await threadMessages()).find((m: { direction: string }) => m.direction === "inbound")
      expect(latest.read_at).toBeNull()
      const posts = graph.requests().length
      const reply = await call(stage.server, "POST", `/api/v1/conversations/${thread.conversation.id}/read`, {
        auth: owner()
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toEqual({
        conversation_id: thread.conversation.id,
        message_id: latest.id,
        read_at: expect.any(String)
      })
      const requests = graph.requests().slice(posts)
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        `POST /v24.0/${thread.channel.phone_number_id}/messages`
      ])
      expect(requests[0]!.rawBody).toBe(
        `{"messaging_product":"whatsapp","status":"read","message_id":"${latest.external_id}"}`
      )
      expect((await get(`/api/v1/messages/${latest.id}`)).read_at).toBe(reply.body.read_at)
      // Again: the same answer, and WhatsApp is not told twice.
      const again = await call(stage.server, "POST", `/api/v1/conversations/${thread.conversation.id}/read`, {
        auth: owner()
      })
      expect(again.status, again.text).toBe(200)
      expect(again.body).toEqual(reply.body)
      expect(graph.requests().length).toBe(posts + 1)
    })

    it("answers 502 when WhatsApp refuses a read receipt, records nothing, and takes the next one", async () => {
      const raw = MetaPayloads.inboundTextPayload({
        phoneNumberId: thread.channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from: thread.from,
        name: null,
        text: "Still there?",
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date((await get(`/api/v1/conversations/${thread.conversation.id}`)).last_inbound_at)
      })
      expect((await postWebhook(stage.server, raw)).status).toBe(200)
      const latest = (await threadMessages()).find((m: { text: string }) => m.text === "Still there?")
      graph.script(MockGraph.Reply.graphError(400, 100, { message: "Invalid parameter" }))
      const refused = await call(stage.server, "POST", `/api/v1/conversations/${thread.conversation.id}/read`, {
        auth: owner()
      })
      expect(refused.status, refused.text).toBe(502)
      expect(refused.body).toEqual({
        error: "WhatsApp (Graph error 100): Invalid parameter",
        code: "whatsapp_provider_error"
      })
      expect((await get(`/api/v1/messages/${latest.id}`)).read_at).toBeNull()
      const taken = await call(stage.server, "POST", `/api/v1/conversations/${thread.conversation.id}/read`, {
        auth: owner()
      })
      expect(taken.status, taken.text).toBe(200)
      expect(taken.body.message_id).toBe(latest.id)
    })

    it("has nothing to mark in a thread the lead never wrote in; needs messages:send; 404 for an unknown thread", async () => {
      const lead = await call(stage.server, "POST", "/api/v1/leads", {
        auth: owner(),
        json: { name: "Silent", phone: "+14155550133" }
      })
      const made = await call(stage.server, "POST", "/api/v1/messages", {
        auth: owner(),
        json: { ...TEMPLATE_SEND, lead_id: lead.body.id, channel_id: thread.channel.id }
      })
      await sent(made.body.id)
      const posts = graph.requests().length
      const silent = await call(stage.server, "POST", `/api/v1/conversations/${made.body.conversation_id}/read`, {
        auth: owner()
      })
      expect(silent.status, silent.text).toBe(200)
      expect(silent.body).toEqual({ conversation_id: made.body.conversation_id, message_id: null, read_at: null })
      expect(graph.requests().length).toBe(posts)
      const reader = await makeKey(stage.server, stage.account.accountId, { scopes: ["conversations:read"] })
      const forbidden = await call(stage.server, "POST", `/api/v1/conversations/${thread.conversation.id}/read`, {
        auth: reader.apiKey
      })
      expect(forbidden.status, forbidden.text).toBe(403)
      expect(forbidden.body.code).toBe("forbidden")
      const unknown = await call(stage.server, "POST", "/api/v1/conversations/cv_00000000000000000000000000/read", {
        auth: owner()
      })
      expect(unknown.status, unknown.text).toBe(404)
    })
  })

  describe(`the simulator plays a customer's button reply ${name}`, () => {
    const stage = Wirings.stage(wiring)

    it("links the customer's choice to the question, and marks the thread read", async () => {
      const key = stage.account.ownerKey
      const channel = await createChannel(stage.server, key)
      const from = "16315550142"
      const hello = await call(stage.server, "POST", "/admin/v1/simulator/whatsapp/inbound", {
        auth: stage.server.adminToken,
        json: { phone_number_id: channel.phone_number_id, from, text: "Is my order on its way?" }
      })
      expect(hello.status, hello.text).toBe(202)
      const conversation = (
        await call(stage.server, "GET", `/api/v1/conversations?channel_id=${channel.id}`, { auth: key })
      ).body.conversations[0]
      const question = await call(stage.server, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: key,
        json: interactive(BUTTONS)
      })
      expect(question.status, question.text).toBe(201)
      const delivered = await waitUntil(
        async () => (await call(stage.server, "GET", `/api/v1/messages/${question.body.id}`, { auth: key })).body,
        (message) => message.status === "read"
      )
      const choice = await call(stage.server, "POST", "/admin/v1/simulator/whatsapp/inbound", {
        auth: stage.server.adminToken,
        json: {
          phone_number_id: channel.phone_number_id,
          from,
          button_reply: { id: "keep", title: "Keep it" },
          reply_to: question.body.id
        }
      })
      expect(choice.status, choice.text).toBe(202)
      const newest = (
        await call(stage.server, "GET", `/api/v1/conversations/${conversation.id}/messages`, { auth: key })
      ).body.messages[0]
      expect(newest).toMatchObject({
        direction: "inbound",
        type: "interactive",
        text: "Keep it",
        external_id: choice.body.external_id,
        reply_to: { message_id: question.body.id, external_id: delivered.external_id }
      })
      const read = await call(stage.server, "POST", `/api/v1/conversations/${conversation.id}/read`, { auth: key })
      expect(read.status, read.text).toBe(200)
      expect(read.body.message_id).toBe(newest.id)
    })

    it("refuses a customer body that is not one thing, or a choice answering nothing", async () => {
      const channel = await createChannel(stage.server, stage.account.ownerKey)
      const base = { phone_number_id: channel.phone_number_id, from: "16315550143" }
      for (const [body, path] of [
        [base, "text"],
        [{ ...base, text: "hi", button_reply: { id: "a", title: "A" }, reply_to: "msg_x" }, "button_reply"],
        [{ ...base, list_reply: { id: "a", title: "A" } }, "reply_to"],
        [{ ...base, button_reply: { id: "a", title: x(21) }, reply_to: "msg_x" }, "button_reply.title"],
        [{ ...base, button_reply: { id: x(257), title: "A" }, reply_to: "msg_x" }, "button_reply.id"],
        [{ ...base, list_reply: { id: x(201), title: "A" }, reply_to: "msg_x" }, "list_reply.id"],
        [{ ...base, list_reply: { id: "a", title: x(25) }, reply_to: "msg_x" }, "list_reply.title"],
        [
          { ...base, list_reply: { id: "a", title: "A", description: x(73) }, reply_to: "msg_x" },
          "list_reply.description"
        ],
        [{ ...base, text: "" }, "text"]
      ] as const) {
        const reply = await call(stage.server, "POST", "/admin/v1/simulator/whatsapp/inbound", {
          auth: stage.server.adminToken,
          json: body
        })
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body.details.map((detail: { path: string }) => detail.path)).toContain(path)
      }
      // Nothing reached the webhook: no lead wrote, no thread was made.
      const threads = await call(stage.server, "GET", `/api/v1/conversations?channel_id=${channel.id}`, {
        auth: stage.account.ownerKey
      })
      expect(threads.body.conversations).toEqual([])
    })
  })
}

import { beforeAll, describe, expect, it } from "vitest"
import { createChannel } from "../channels/ChannelsResource.ts"
import { makeConversation } from "../conversations/ConversationsResource.ts"
import { makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden } from "../internal/wire.ts"
import { createLead } from "../leads/LeadsResource.ts"
import type { ContractContext } from "../Slice.ts"
import { NOTICES_PATH, readNotices } from "./OrderNoticesResource.ts"
import { createOrder } from "./OrdersResource.ts"

const TEMPLATE = { name: "order_update", language: "pt_BR" }

/** Order status notices (issue 13, "an order's status change can notify the lead", optional per account). */
export const contract = (context: ContractContext) => {
  describe("order notices", () => {
    const owner = () => context.acme.ownerKey
    const configure = (json: unknown, key = owner()) => call(context.target, "PATCH", NOTICES_PATH, { auth: key, json })
    const move = async (id: string, json: unknown) => {
      const reply = await call(context.target, "PATCH", `/api/v1/orders/${id}`, { auth: owner(), json })
      expect(reply.status, reply.text).toBe(200)
      return reply.body as { status: string; payment_status: string }
    }
    const outbound = async (conversationId: string) => {
      const reply = await call(context.target, "GET", `/api/v1/conversations/${conversationId}/messages?limit=100`, {
        auth: owner()
      })
      expect(reply.status, reply.text).toBe(200)
      return (reply.body.messages as Array<Record<string, any>>).filter((m) => m.direction === "outbound")
    }
    const orderFor = (leadId: string) =>
      createOrder(context.target, owner(), {
        lead_id: leadId,
        currency: "BRL",
        items: [{ name: "Bolo", unit_amount: 2500, quantity: 1 }]
      })

    let ordersRead: string
    let ordersWrite: string
    beforeAll(async () => {
      const key = async (scope: string) =>
        (await makeKey(context.target, context.acme.accountId, { scopes: [scope] })).apiKey
      ordersRead = await key("orders:read")
      ordersWrite = await key("orders:write")
    })

    it("is off until set; orders:read reads it, only a full-access key changes it, and a bad template changes nothing", async () => {
      const other = await readNotices(context.target, context.other.ownerKey)
      expect(other).toEqual({ enabled: false, template: null })
      expect(await readNotices(context.target, ordersRead)).toEqual(await readNotices(context.target, owner()))

      const before = await readNotices(context.target, owner())
      for (const key of [ordersWrite, ordersRead]) {
        const refused = await configure({ enabled: true }, key)
        expect([refused.status, refused.body]).toEqual([403, forbidden("full access")])
      }
      expect(await readNotices(context.target, owner())).toEqual(before)

      const bad = await configure({ enabled: true, template: { name: "Order Update", language: "english" } })
      expect(bad.status, bad.text).toBe(400)
      expect(bad.body.code).toBe("validation_error")
      expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
        "template.language",
        "template.name"
      ])
      expect(await readNotices(context.target, owner())).toEqual(before)

      const on = await configure({ enabled: true, template: TEMPLATE })
      expect(on.status, on.text).toBe(200)
      expect(on.body).toEqual({ enabled: true, template: TEMPLATE })
      // A field left out stays as it was.
      expect((await configure({ template: null })).body).toEqual({ enabled: true, template: null })
      expect((await configure({ enabled: false })).body).toEqual({ enabled: false, template: null })
      expect(await readNotices(context.target, owner())).toEqual({ enabled: false, template: null })
      expect(await readNotices(context.target, context.other.ownerKey)).toEqual(other)
    })

    it("queues the template to the lead's conversation on each status move, none on a payment-only move or when off", async () => {
      const { conversation } = await makeConversation(context.target, owner())
      const order = await orderFor(conversation.lead_id)
      expect((await configure({ enabled: true, template: TEMPLATE })).status).toBe(200)

      await move(order.id, { status: "confirmed" })
      await move(order.id, { payment_status: "paid" })
      await move(order.id, { note: "Ring twice" })
      await move(order.id, { status: "shipped" })
      const sent = await outbound(conversation.id)
      expect(sent).toHaveLength(2)
      // Newest first.
      expect(sent.map((m) => [m.type, m.sender_type, m.lead_id, m.template])).toEqual(
        ["shipped", "processing"].map((status) => [
          "template",
          "user",
          conversation.lead_id,
          {
            ...TEMPLATE,
            components: [
              {
                type: "body",
                parameters: [
                  { type: "text", text: order.id },
                  { type: "text", text: status }
                ]
              }
            ]
          }
        ])
      )

      expect((await configure({ enabled: false })).status).toBe(200)
      await move(order.id, { status: "delivered" })
      expect(await outbound(conversation.id)).toHaveLength(2)
    })

    it("sends a text within the lead's window; a lead with no conversation gets none, and the status still moves", async () => {
      expect((await configure({ enabled: true, template: null })).status).toBe(200)
      const { conversation } = await makeConversation(context.target, owner())
      const order = await orderFor(conversation.lead_id)
      await move(order.id, { status: "cancelled" })
      const [text, ...rest] = await outbound(conversation.id)
      expect(rest).toEqual([])
      expect([text?.type, text?.text, text?.template]).toEqual([
        "text",
        `Your order ${order.id} is now canceled.`,
        null
      ])

      const silent = await createLead(context.target, owner())
      const unreachable = await orderFor(silent.id)
      expect((await move(unreachable.id, { status: "confirmed" })).status).toBe("confirmed")
      const threads = await call(context.target, "GET", `/api/v1/conversations?lead_id=${silent.id}`, {
        auth: owner()
      })
      expect(threads.body.conversations).toEqual([])
      expect((await configure({ enabled: false })).status).toBe(200)
    })

    it("skips a text to a lead whose window is closed, and the template still goes to them", async () => {
      // A thread the account opened with a template: the lead never wrote, so no text may follow.
      const channel = await createChannel(context.target, owner())
      const lead = await createLead(context.target, owner())
      const opened = await call(context.target, "POST", "/api/v1/messages", {
        auth: owner(),
        json: { type: "template", template: TEMPLATE, lead_id: lead.id, channel_id: channel.id }
      })
      expect(opened.status, opened.text).toBe(201)
      const conversationId = opened.body.conversation_id as string
      const order = await orderFor(lead.id)

      expect((await configure({ enabled: true, template: null })).status).toBe(200)
      expect((await move(order.id, { status: "confirmed" })).status).toBe("confirmed")
      expect((await outbound(conversationId)).map((m) => m.id)).toEqual([opened.body.id])

      expect((await configure({ template: TEMPLATE })).status).toBe(200)
      await move(order.id, { status: "shipped" })
      const [notice, ...before] = await outbound(conversationId)
      expect(before.map((m) => m.id)).toEqual([opened.body.id])
      expect(notice?.template.components).toEqual([
        {
          type: "body",
          parameters: [
            { type: "text", text: order.id },
            { type: "text", text: "shipped" }
          ]
        }
      ])
      expect((await configure({ enabled: false })).status).toBe(200)
    })
  })
}

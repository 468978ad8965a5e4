import { describe, expect, it } from "vitest"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { createProduct, nextSku, readProduct } from "../src/catalogue/CatalogueResource.ts"
import { makeConversation, postWebhook } from "../src/conversations/ConversationsResource.ts"
import { call } from "../src/Http.ts"
import { listAll, until } from "../src/internal/wire.ts"
import * as Wirings from "../src/Wirings.ts"

/**
 * Orders placed in WhatsApp (docs/contract-commerce-ai.md §3, "WhatsApp mapping"): a customer's cart
 * arrives as an `order` message on the real inbound route, signed as Meta signs it, and becomes
 * one order however often Meta delivers it.
 */
for (const [name, wiring] of Wirings.wirings) {
  describe(`WhatsApp orders ${name}`, () => {
    const stage = Wirings.stage(wiring)

    it("places one order for a cart Meta delivers three times, two at once: lines matched by SKU, unknown ones custom at the message's price", async () => {
      const { channel, from, conversation } = await makeConversation(stage.server, stage.account.ownerKey)
      const pao = await createProduct(stage.server, stage.account.ownerKey, {
        unit_amount: 1290,
        currency: "BRL",
        stock: 10
      })
      const endpoint = stage.receiver.endpoint(`/wa-orders-${name.replace(" ", "-")}`)
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: stage.account.ownerKey,
        json: { url: endpoint.url, events: ["order.created"] }
      })
      endpoint.setSecret(registered.body.secret)
      const wamid = `wamid.${crypto.randomUUID()}`
      const raw = MetaPayloads.inboundOrderPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from,
        name: "Ada Customer",
        externalId: wamid,
        timestamp: new Date(channel.created_at as string),
        catalogId: "1234567890",
        text: "Deliver after 18h",
        items: [
          // The catalogue's price wins for a known SKU, as for any order.
          { product_retailer_id: pao.sku, quantity: 2, item_price: 12.5, currency: "brl" },
          { product_retailer_id: "NOT-IN-CATALOGUE", quantity: 1, item_price: 7.99, currency: "BRL" }
        ]
      })
      const replies = await Promise.all([postWebhook(stage.server, raw), postWebhook(stage.server, raw)])
      replies.push(await postWebhook(stage.server, raw))
      expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200])

      const orders = await listAll(
        stage.server,
        stage.account.ownerKey,
        `/api/v1/orders?lead_id=${conversation.lead_id}`,
        "orders"
      )
      expect(orders).toHaveLength(1)
      expect(orders[0]).toMatchObject({
        lead_id: conversation.lead_id,
        status: "pending",
        payment_status: "unpaid",
        currency: "BRL",
        source: "whatsapp",
        whatsapp_message_id: wamid,
        note: "Deliver after 18h",
        amount_subtotal: 2 * 1290 + 799,
        amount_total: 2 * 1290 + 799,
        items: [
          { product_id: pao.id, sku: pao.sku, name: pao.name, unit_amount: 1290, quantity: 2, amount_total: 2580 },
          { product_id: null, sku: null, name: "NOT-IN-CATALOGUE", unit_amount: 799, quantity: 1, amount_total: 799 }
        ]
      })
      expect((await readProduct(stage.server, stage.account.ownerKey, pao.id)).stock).toBe(8)
      const delivered = await endpoint.waitFor(1, 10_000)
      // A moment for a second delivery that must not come.
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(endpoint.requests()).toHaveLength(1)
      expect(delivered[0]!.verified).toEqual({ service: true, standard: true })
      const event = JSON.parse(delivered[0]!.body)
      expect(event.type).toBe("order.created")
      expect(event.data).toEqual(orders[0])
    })

    it("keeps a cart whose product ran out: its items become custom lines, nothing is taken, the metadata names them", async () => {
      const { channel, from, conversation } = await makeConversation(stage.server, stage.account.ownerKey)
      const scarce = await createProduct(stage.server, stage.account.ownerKey, {
        sku: nextSku(),
        currency: "EUR",
        unit_amount: 500,
        stock: 1
      })
      const wamid = `wamid.${crypto.randomUUID()}`
      const reply = await postWebhook(
        stage.server,
        MetaPayloads.inboundOrderPayload({
          phoneNumberId: channel.phone_number_id,
          displayPhoneNumber: "16505551111",
          from,
          name: null,
          externalId: wamid,
          timestamp: new Date(channel.created_at as string),
          catalogId: "1",
          items: [{ product_retailer_id: scarce.sku, quantity: 3, item_price: 5, currency: "EUR" }]
        })
      )
      expect(reply.status).toBe(200)
      const orders = await until(
        () => listAll(stage.server, stage.account.ownerKey, `/api/v1/orders?lead_id=${conversation.lead_id}`, "orders"),
        (list) => list.length === 1
      )
      expect(orders[0]).toMatchObject({
        whatsapp_message_id: wamid,
        items: [{ product_id: null, sku: null, name: scarce.name, unit_amount: 500, quantity: 3, amount_total: 1500 }],
        metadata: { whatsapp_unstocked_skus: [scarce.sku] }
      })
      expect((await readProduct(stage.server, stage.account.ownerKey, scarce.id)).stock).toBe(1)
      // Cancelling gives back nothing it did not take.
      const cancelled = await call(stage.server, "PATCH", `/api/v1/orders/${orders[0].id}`, {
        auth: stage.account.ownerKey,
        json: { status: "cancelled" }
      })
      expect(cancelled.status, cancelled.text).toBe(200)
      expect((await readProduct(stage.server, stage.account.ownerKey, scarce.id)).stock).toBe(1)
    })
  })
}

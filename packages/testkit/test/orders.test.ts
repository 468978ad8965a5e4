import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import * as Client from "@leadline/http-adapter/Client"
import { describe, expect, it } from "vitest"
import { createProduct, readProduct } from "../src/catalogue/CatalogueResource.ts"
import { call } from "../src/Http.ts"
import { listAll } from "../src/internal/wire.ts"
import { createLead } from "../src/leads/LeadsResource.ts"
import { createOrder, readOrder } from "../src/orders/OrdersResource.ts"
import * as Wirings from "../src/Wirings.ts"

/**
 * Orders end to end on each wiring (docs/contract-commerce-ai.md §3): their events reach a receiver on a
 * real socket, signed, once each, with `previous_attributes`; stock holds under 50 racing orders;
 * `If-Match` lets one of two racing changes through; the typed client places and moves one.
 */
for (const [name, wiring] of Wirings.wirings) {
  describe(`orders ${name}`, () => {
    const stage = Wirings.stage(wiring)

    const patch = (id: string, json: unknown, headers: Record<string, string> = {}) =>
      call(stage.server, "PATCH", `/api/v1/orders/${id}`, { auth: stage.account.ownerKey, json, headers })

    it("delivers order.created and one order.status_changed per move, signed, with the old values of what changed", async () => {
      const endpoint = stage.receiver.endpoint(`/orders-${name.replace(" ", "-")}`)
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: stage.account.ownerKey,
        json: { url: endpoint.url, events: ["order.created", "order.status_changed"] }
      })
      endpoint.setSecret(registered.body.secret)
      const lead = await createLead(stage.server, stage.account.ownerKey)
      const product = await createProduct(stage.server, stage.account.ownerKey, { stock: null })
      const created = await createOrder(stage.server, stage.account.ownerKey, {
        lead_id: lead.id,
        items: [{ product_id: product.id, quantity: 2 }]
      })
      const confirmed = await patch(created.id, { status: "confirmed" })
      expect(confirmed.status, confirmed.text).toBe(200)
      // A note alone is a change (a new version) but no status event.
      const noted = await patch(created.id, { note: "Ring twice" })
      expect([noted.status, noted.body.version]).toEqual([200, 3])
      const shipped = await patch(created.id, { status: "shipped", payment_status: "paid" })
      expect(shipped.status, shipped.text).toBe(200)
      // The same status again changes nothing and says nothing.
      const same = await patch(created.id, { status: "shipped" })
      expect([same.status, same.body]).toEqual([200, shipped.body])

      const delivered = await endpoint.waitFor(3, 10_000)
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(endpoint.requests()).toHaveLength(3)
      for (const request of delivered) expect(request.verified).toEqual({ service: true, standard: true })
      const events = delivered.map((request) => JSON.parse(request.body)).sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(new Set(events.map((event) => event.id)).size).toBe(3)
      expect(events.map((event) => [event.type, event.previous_attributes])).toEqual([
        ["order.created", undefined],
        ["order.status_changed", { status: "pending", confirmed_at: null }],
        ["order.status_changed", { status: "confirmed", shipped_at: null, payment_status: "unpaid", paid_at: null }]
      ])
      expect(events[0].data).toEqual(created)
      expect(events[1].data).toEqual(confirmed.body)
      expect(events[2].data).toEqual(shipped.body)
      expect(events[2].data).toMatchObject({
        status: "shipped",
        payment_status: "paid",
        note: "Ring twice",
        version: 4
      })
    })

    it("creates exactly 10 of 50 racing orders for a product with stock 10; a cancel gives its units back", async () => {
      const lead = await createLead(stage.server, stage.account.ownerKey)
      const product = await createProduct(stage.server, stage.account.ownerKey, { stock: 10 })
      const replies = await Promise.all(
        Array.from({ length: 50 }, () =>
          call(stage.server, "POST", "/api/v1/orders", {
            auth: stage.account.ownerKey,
            json: { lead_id: lead.id, items: [{ product_id: product.id, quantity: 1 }] }
          })
        )
      )
      const statuses = replies.map((reply) => reply.status)
      expect(statuses.filter((status) => status === 201)).toHaveLength(10)
      expect(statuses.filter((status) => status === 409)).toHaveLength(40)
      for (const reply of replies.filter((r) => r.status === 409)) {
        expect(reply.body).toEqual({
          error: `Insufficient stock for ${product.sku}: 1 asked, 0 left`,
          code: "insufficient_stock"
        })
      }
      expect(await readProduct(stage.server, stage.account.ownerKey, product.id)).toMatchObject({
        stock: 0,
        version: 11
      })
      const orders = await listAll(stage.server, stage.account.ownerKey, `/api/v1/orders?lead_id=${lead.id}`, "orders")
      expect(orders).toHaveLength(10)
      const cancelled = await patch(orders[0].id, { status: "cancelled" })
      expect([cancelled.status, cancelled.body.status]).toEqual([200, "cancelled"])
      expect((await readProduct(stage.server, stage.account.ownerKey, product.id)).stock).toBe(1)
    })

    it("keeps no answer for a refusal for want of stock: the same Idempotency-Key tries again once stock is back", async () => {
      const lead = await createLead(stage.server, stage.account.ownerKey)
      const product = await createProduct(stage.server, stage.account.ownerKey, { stock: 1 })
      const note = `retry-${crypto.randomUUID()}`
      const order = () =>
        call(stage.server, "POST", "/api/v1/orders", {
          auth: stage.account.ownerKey,
          headers: { "idempotency-key": note },
          json: { lead_id: lead.id, note, items: [{ product_id: product.id, quantity: 2 }] }
        })
      const short = await order()
      expect([short.status, short.body.code, short.headers.get("idempotent-replayed")]).toEqual([
        409,
        "insufficient_stock",
        null
      ])
      // The refused order's own writes (its row, its event) rolled back with it.
      expect(
        await listAll(stage.server, stage.account.ownerKey, `/api/v1/orders?lead_id=${lead.id}`, "orders")
      ).toEqual([])
      const restocked = await call(stage.server, "PATCH", `/api/v1/catalogue/products/${product.id}`, {
        auth: stage.account.ownerKey,
        json: { stock: 5 }
      })
      expect(restocked.status).toBe(200)
      const placed = await order()
      expect([placed.status, placed.body.note]).toEqual([201, note])
      const replayed = await order()
      expect([replayed.status, replayed.headers.get("idempotent-replayed"), replayed.body]).toEqual([
        201,
        "true",
        placed.body
      ])
      expect((await readProduct(stage.server, stage.account.ownerKey, product.id)).stock).toBe(3)
    })

    it("lets one of two changes with the same If-Match through: the other is 412 and changes nothing", async () => {
      const lead = await createLead(stage.server, stage.account.ownerKey)
      const order = await createOrder(stage.server, stage.account.ownerKey, {
        lead_id: lead.id,
        currency: "EUR",
        items: [{ name: "Repair", unit_amount: 5000, quantity: 1 }]
      })
      const [a, b] = await Promise.all([
        patch(order.id, { status: "shipped" }, { "if-match": '"1"' }),
        patch(order.id, { status: "cancelled" }, { "if-match": '"1"' })
      ])
      expect([a!.status, b!.status].sort()).toEqual([200, 412])
      const winner = a!.status === 200 ? a! : b!
      const loser = a!.status === 200 ? b! : a!
      expect(winner.headers.get("etag")).toBe('"2"')
      expect(loser.body).toEqual({
        error: 'If-Match does not match the current version (ETag "2")',
        code: "precondition_failed"
      })
      expect(await readOrder(stage.server, stage.account.ownerKey, order.id)).toEqual(winner.body)
    })

    it("places and moves an order through the generated client; an illegal move is a typed failure", async () => {
      const lead = await createLead(stage.server, stage.account.ownerKey)
      const product = await createProduct(stage.server, stage.account.ownerKey, {
        currency: "jpy",
        unit_amount: 1500,
        stock: 3
      })
      const result = await Effect.runPromise(
        Client.make({ baseUrl: stage.server.baseUrl, apiKey: stage.account.ownerKey }).pipe(
          Effect.flatMap((client) =>
            Effect.gen(function* () {
              const placed = yield* client.orders.create({
                payload: { lead_id: lead.id, items: [{ sku: product.sku, quantity: 3 }], amount_shipping: 700 },
                headers: {}
              })
              const delivered = yield* client.orders.update({
                params: { id: placed.id },
                payload: { status: "delivered" },
                headers: { "if-match": `"${placed.version}"` }
              })
              const back = yield* Effect.flip(
                client.orders.update({ params: { id: placed.id }, payload: { status: "pending" }, headers: {} })
              )
              const short = yield* Effect.flip(
                client.orders.create({
                  payload: { lead_id: lead.id, items: [{ sku: product.sku, quantity: 1 }] },
                  headers: {}
                })
              )
              return { placed, delivered, back, short }
            })
          ),
          Effect.provide(FetchHttpClient.layer)
        )
      )
      expect(result.placed).toMatchObject({ currency: "JPY", amount_subtotal: 4500, amount_total: 5200, version: 1 })
      expect(result.delivered).toMatchObject({ status: "delivered", version: 2 })
      expect(result.back._tag).toBe("InvalidTransition")
      expect(result.short._tag).toBe("InsufficientStock")
    })
  })
}

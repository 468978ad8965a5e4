import { beforeAll, describe, expect, it } from "vitest"
import { createProduct, readProduct } from "../catalogue/CatalogueResource.ts"
import { makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden, listAll, NO_SUCH_ROUTE, notFound, sleep } from "../internal/wire.ts"
import { createLead } from "../leads/LeadsResource.ts"
import type { ContractContext } from "../Slice.ts"
import { createOrder, ORDER_KEYS, readOrder } from "./OrdersResource.ts"

const STATUSES = ["pending", "confirmed", "shipped", "delivered", "cancelled"] as const
type Status = (typeof STATUSES)[number]

// docs/contract-commerce-ai.md §3, written out rather than computed.
const NEXT: Record<Status, ReadonlyArray<Status>> = {
  pending: ["confirmed", "shipped", "delivered", "cancelled"],
  confirmed: ["shipped", "delivered", "cancelled"],
  shipped: ["delivered", "cancelled"],
  delivered: [],
  cancelled: []
}
/** A legal path from pending to each status. */
const PATH_TO: Record<Status, ReadonlyArray<Status>> = {
  pending: [],
  confirmed: ["confirmed"],
  shipped: ["confirmed", "shipped"],
  delivered: ["shipped", "delivered"],
  cancelled: ["cancelled"]
}
const STAMP: Record<Status, string | undefined> = {
  pending: undefined,
  confirmed: "confirmed_at",
  shipped: "shipped_at",
  delivered: "delivered_at",
  cancelled: "cancelled_at"
}

/** Orders (docs/contract-commerce-ai.md §1, §3): exact totals, both machines cell by cell, stock, snapshots, filters, scopes. */
export const contract = (context: ContractContext) => {
  describe("orders", () => {
    const owner = () => context.acme.ownerKey
    const post = (json: unknown, key = owner(), headers: Record<string, string> = {}) =>
      call(context.target, "POST", "/api/v1/orders", { auth: key, json, headers })
    const patch = (id: string, json: unknown, key = owner()) =>
      call(context.target, "PATCH", `/api/v1/orders/${id}`, { auth: key, json })

    let leadId: string
    let ordersRead: string
    let ordersWrite: string
    let catalogueRead: string
    beforeAll(async () => {
      leadId = (await createLead(context.target, owner())).id
      const key = async (scope: string) =>
        (await makeKey(context.target, context.acme.accountId, { scopes: [scope] })).apiKey
      ordersRead = await key("orders:read")
      ordersWrite = await key("orders:write")
      catalogueRead = await key("catalogue:read")
    })

    const custom = (fields: Record<string, unknown> = {}) => ({
      lead_id: leadId,
      currency: "EUR",
      items: [{ name: "Repair", unit_amount: 5000, quantity: 1 }],
      ...fields
    })
    const orderAt = async (status: Status) => {
      const order = await createOrder(context.target, owner(), custom())
      for (const step of PATH_TO[status]) {
        const moved = await patch(order.id, { status: step })
        expect(moved.status, moved.text).toBe(200)
      }
      return readOrder(context.target, owner(), order.id)
    }

    it("prices lines from the catalogue and adds up exactly for 0-, 2- and 3-digit currencies", async () => {
      const cases = [
        ["JPY", 1500, 3, 700, 200, 4500, 5000],
        ["BRL", 1290, 2, 500, 0, 2580, 3080],
        ["KWD", 1250, 3, 500, 250, 3750, 4000]
      ] as const
      for (const [currency, unit, quantity, shipping, discount, subtotal, total] of cases) {
        const product = await createProduct(context.target, owner(), {
          currency: currency.toLowerCase(),
          unit_amount: unit
        })
        const reply = await post({
          lead_id: leadId,
          items: [{ product_id: product.id, quantity }],
          amount_shipping: shipping,
          amount_discount: discount
        })
        expect(reply.status, reply.text).toBe(201)
        expect(Object.keys(reply.body).sort()).toEqual(ORDER_KEYS)
        expect(reply.headers.get("etag")).toBe('"1"')
        expect(reply.body).toMatchObject({
          lead_id: leadId,
          status: "pending",
          payment_status: "unpaid",
          currency,
          items: [
            {
              product_id: product.id,
              sku: product.sku,
              name: product.name,
              unit_amount: unit,
              quantity,
              amount_total: subtotal
            }
          ],
          amount_subtotal: subtotal,
          amount_shipping: shipping,
          amount_discount: discount,
          amount_total: total,
          source: "api",
          whatsapp_message_id: null,
          tracking: null,
          version: 1
        })
        expect(reply.body.id).toMatch(/^ord_[0-9a-z]{26}$/)
        expect(reply.body.items[0].id).toMatch(/^li_[0-9a-z]{26}$/)
      }
    })

    it("refuses bad money, quantities and references with 400 details, and places nothing", async () => {
      const product = await createProduct(context.target, owner(), { currency: "BRL", stock: 5 })
      const foreign = await createProduct(context.target, context.other.ownerKey)
      const foreignLead = await createLead(context.target, context.other.ownerKey)
      const note = `bad-${crypto.randomUUID()}`
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [custom({ items: [{ name: "x", unit_amount: 9.99, quantity: 1 }] }), "items.0.unit_amount"],
        [custom({ items: [{ name: "x", unit_amount: 100, quantity: -1 }] }), "items.0.quantity"],
        [custom({ items: [{ name: "x", unit_amount: 100, quantity: 0 }] }), "items.0.quantity"],
        [custom({ currency: "XYZ" }), "currency"],
        [custom({ amount_shipping: 1.5 }), "amount_shipping"],
        [custom({ items: [] }), "items"],
        [{ lead_id: leadId, items: [{ name: "x", unit_amount: 100, quantity: 1 }] }, "currency"],
        [{ lead_id: leadId, items: [{ product_id: product.id, unit_amount: 1, quantity: 1 }] }, "items.0"],
        [custom({ lead_id: foreignLead.id }), "lead_id"],
        [custom({ items: [{ product_id: foreign.id, quantity: 1 }] }), "items.0.product_id"],
        [custom({ items: [{ product_id: product.id, quantity: 1 }] }), "items.0.product_id"],
        [custom({ amount_discount: 5001 }), "amount_discount"]
      ]
      for (const [body, path] of cases) {
        const reply = await post({ ...body, note })
        expect(reply.status, `${JSON.stringify(body)}: ${reply.text}`).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details.map((d: { path: string }) => d.path)).toContain(path)
      }
      const placed = await listAll(context.target, owner(), `/api/v1/orders?lead_id=${leadId}`, "orders")
      expect(placed.filter((order) => order.note === note)).toEqual([])
      expect((await readProduct(context.target, owner(), product.id)).stock).toBe(5)
    })

    describe("moves status by the table, and refuses every other move with the allowed ones", () => {
      for (const from of STATUSES) {
        it(`from ${from}`, async () => {
          for (const to of STATUSES.filter((s) => s !== from)) {
            const order = await orderAt(from)
            const reply = await patch(order.id, { status: to })
            if (NEXT[from].includes(to)) {
              expect(reply.status, `${from} → ${to}: ${reply.text}`).toBe(200)
              expect(reply.body).toMatchObject({ status: to, version: order.version + 1 })
              expect(reply.body[STAMP[to]!]).toBe(reply.body.updated_at)
            } else {
              expect([reply.status, reply.body], `${from} → ${to}`).toEqual([
                409,
                {
                  error: `Cannot change status from ${from} to ${to}`,
                  code: "invalid_transition",
                  details: NEXT[from].map((state) => ({ path: "status", message: state }))
                }
              ])
              expect(await readOrder(context.target, owner(), order.id)).toEqual(order)
            }
          }
        })
      }
    })

    it("moves payment unpaid → paid → refunded only, and not onto a cancelled order", async () => {
      const order = await orderAt("pending")
      const refundUnpaid = await patch(order.id, { payment_status: "refunded" })
      expect([refundUnpaid.status, refundUnpaid.body]).toEqual([
        409,
        {
          error: "Cannot change payment_status from unpaid to refunded",
          code: "invalid_transition",
          details: [{ path: "payment_status", message: "paid" }]
        }
      ])
      const paid = await patch(order.id, { payment_status: "paid" })
      expect([paid.status, paid.body.payment_status, paid.body.paid_at]).toEqual([200, "paid", paid.body.updated_at])
      const unpaid = await patch(order.id, { payment_status: "unpaid" })
      expect([unpaid.status, unpaid.body.code]).toEqual([409, "invalid_transition"])
      const refunded = await patch(order.id, { payment_status: "refunded" })
      expect([refunded.status, refunded.body.payment_status, refunded.body.paid_at]).toEqual([
        200,
        "refunded",
        paid.body.paid_at
      ])
      const again = await patch(order.id, { payment_status: "paid" })
      expect([again.status, again.body.details]).toEqual([409, []])

      const cancelled = await orderAt("cancelled")
      const payCancelled = await patch(cancelled.id, { payment_status: "paid" })
      expect([payCancelled.status, payCancelled.body.details]).toEqual([409, []])
      const both = await patch((await orderAt("confirmed")).id, { status: "cancelled", payment_status: "paid" })
      expect([both.status, both.body.error]).toEqual([409, "Cannot change payment_status from unpaid to paid"])
    })

    it("gives stock back on a cancel before shipping, not after", async () => {
      const product = await createProduct(context.target, owner(), { stock: 10 })
      const order = (status: Status) =>
        createOrder(context.target, owner(), {
          lead_id: leadId,
          items: [{ product_id: product.id, quantity: 2 }]
        }).then(async (made) => {
          for (const step of PATH_TO[status]) expect((await patch(made.id, { status: step })).status).toBe(200)
          return made
        })
      const pending = await order("pending")
      const confirmed = await order("confirmed")
      const shipped = await order("shipped")
      expect((await readProduct(context.target, owner(), product.id)).stock).toBe(4)
      for (const made of [pending, confirmed, shipped]) {
        expect((await patch(made.id, { status: "cancelled" })).status).toBe(200)
      }
      expect((await readProduct(context.target, owner(), product.id)).stock).toBe(8)
      const tooMany = await post({ lead_id: leadId, items: [{ product_id: product.id, quantity: 9 }] })
      expect([tooMany.status, tooMany.body]).toEqual([
        409,
        { error: `Insufficient stock for ${product.sku}: 9 asked, 8 left`, code: "insufficient_stock" }
      ])
      expect((await readProduct(context.target, owner(), product.id)).stock).toBe(8)
    })

    it("keeps its lines when the product's price changes or the product is deleted", async () => {
      const product = await createProduct(context.target, owner(), { unit_amount: 1290 })
      const order = await createOrder(context.target, owner(), {
        lead_id: leadId,
        items: [{ sku: product.sku, quantity: 2 }]
      })
      const repriced = await call(context.target, "PATCH", `/api/v1/catalogue/products/${product.id}`, {
        auth: owner(),
        json: { unit_amount: 9990, name: "Renamed" }
      })
      expect(repriced.status).toBe(200)
      expect(await readOrder(context.target, owner(), order.id)).toEqual(order)
      const removed = await call(context.target, "DELETE", `/api/v1/catalogue/products/${product.id}`, {
        auth: owner()
      })
      expect(removed.status).toBe(200)
      const after = await readOrder(context.target, owner(), order.id)
      expect(after.items).toEqual(order.items)
      expect(after.items[0]).toMatchObject({ product_id: product.id, sku: product.sku, unit_amount: 1290 })
      // A cancel after the product went gives nothing back and fails nothing.
      expect((await patch(order.id, { status: "cancelled" })).status).toBe(200)
    })

    it("changes note, tracking and metadata as a new version with no status move", async () => {
      const order = await orderAt("shipped")
      const reply = await patch(order.id, {
        note: "Leave at the door",
        tracking: { carrier: "Correios", number: "BR123" },
        metadata: { crm: 7 }
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({
        status: "shipped",
        note: "Leave at the door",
        tracking: { carrier: "Correios", number: "BR123", url: null },
        metadata: { crm: 7 },
        version: order.version + 1
      })
      const cleared = await patch(order.id, { tracking: null })
      expect([cleared.body.tracking, cleared.body.version]).toEqual([null, order.version + 2])
    })

    it("lists newest first by status, payment, lead and creation time", async () => {
      const lead = (await createLead(context.target, owner())).id
      const mine = (query: string) =>
        listAll(context.target, ordersRead, `/api/v1/orders?lead_id=${lead}${query}`, "orders").then((orders) =>
          orders.map((o) => o.id)
        )
      // A millisecond apart at least: the time filters cannot tell two orders of one millisecond apart.
      const first = await createOrder(context.target, owner(), custom({ lead_id: lead }))
      await sleep(2)
      const second = await createOrder(context.target, owner(), custom({ lead_id: lead }))
      await sleep(2)
      const third = await createOrder(context.target, owner(), custom({ lead_id: lead }))
      expect((await patch(second.id, { status: "confirmed", payment_status: "paid" })).status).toBe(200)
      expect(await mine("")).toEqual([third.id, second.id, first.id])
      expect(await mine("&status=confirmed")).toEqual([second.id])
      expect(await mine("&payment_status=unpaid")).toEqual([third.id, first.id])
      expect(await mine(`&created_after=${encodeURIComponent(second.created_at)}`)).toEqual([third.id, second.id])
      expect(await mine(`&created_before=${encodeURIComponent(second.created_at)}`)).toEqual([first.id])
      const bad = await call(context.target, "GET", "/api/v1/orders?created_after=yesterday", { auth: ordersRead })
      expect([bad.status, bad.body.code, bad.body.details]).toEqual([
        400,
        "validation_error",
        [{ path: "created_after", message: "must be an ISO 8601 time" }]
      ])
    })

    it("answers a retried create with the same order, taking stock once", async () => {
      const product = await createProduct(context.target, owner(), { stock: 5 })
      const body = { lead_id: leadId, items: [{ product_id: product.id, quantity: 2 }] }
      const key = `order-${crypto.randomUUID()}`
      const first = await post(body, owner(), { "idempotency-key": key })
      const again = await post(body, owner(), { "idempotency-key": key })
      expect([first.status, again.status, again.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"])
      expect(again.body).toEqual(first.body)
      // The replay carries the ETag too, so a retried create can be followed by a PATCH with If-Match.
      expect([first.headers.get("etag"), again.headers.get("etag")]).toEqual(['"1"', '"1"'])
      expect((await readProduct(context.target, owner(), product.id)).stock).toBe(3)
    })

    it("lets orders:read read, orders:write write, and neither catalogue:read nor another account in", async () => {
      const order = await createOrder(context.target, ordersWrite, custom())
      expect((await call(context.target, "GET", `/api/v1/orders/${order.id}`, { auth: ordersRead })).status).toBe(200)
      const create = await post(custom(), ordersRead)
      expect([create.status, create.body]).toEqual([403, forbidden("orders:write")])
      const move = await patch(order.id, { status: "confirmed" }, ordersRead)
      expect([move.status, move.body]).toEqual([403, forbidden("orders:write")])
      const byCatalogue = await call(context.target, "GET", "/api/v1/orders", { auth: catalogueRead })
      expect([byCatalogue.status, byCatalogue.body]).toEqual([403, forbidden("orders:read")])
      const moved = await patch(order.id, { status: "confirmed" }, ordersWrite)
      expect(moved.status).toBe(200)
      for (const [method, json] of [
        ["GET", undefined],
        ["PATCH", { status: "cancelled" }]
      ] as const) {
        const reply = await call(context.target, method, `/api/v1/orders/${order.id}`, {
          auth: context.other.ownerKey,
          ...(json === undefined ? {} : { json })
        })
        expect([reply.status, reply.body]).toEqual([404, notFound("order", order.id)])
      }
      const deleted = await call(context.target, "DELETE", `/api/v1/orders/${order.id}`, { auth: owner() })
      expect([deleted.status, deleted.body]).toEqual([404, NO_SUCH_ROUTE])
      expect(await readOrder(context.target, owner(), order.id)).toEqual(moved.body)
    })
  })
}

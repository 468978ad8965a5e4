import { expect } from "vitest"
import { createProduct } from "../catalogue/CatalogueResource.ts"
import { call } from "../Http.ts"
import { createLead } from "../leads/LeadsResource.ts"
import { listAll, neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

/** The fields of an order on the wire, sorted (docs/contract-commerce-ai.md §3). */
export const ORDER_KEYS = [
  "amount_discount",
  "amount_shipping",
  "amount_subtotal",
  "amount_total",
  "cancelled_at",
  "confirmed_at",
  "created_at",
  "currency",
  "delivered_at",
  "id",
  "items",
  "lead_id",
  "metadata",
  "note",
  "paid_at",
  "payment_status",
  "refunded_at",
  "shipped_at",
  "source",
  "status",
  "tracking",
  "updated_at",
  "version",
  "whatsapp_message_id"
]

/** The first item of a list the key sees, or one made with `make` when there is none. */
const firstOr = async (
  target: Target,
  key: string,
  path: string,
  field: string,
  make: () => Promise<{ id: string }>
) => {
  const reply = await call(target, "GET", `${path}${path.includes("?") ? "&" : "?"}limit=1`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return (reply.body[field][0] as { id: string } | undefined) ?? (await make())
}

/**
 * An order body for the account of `key` (a full-access key): a product line and a custom line,
 * for a lead and a product the account has (made when it has none, so a seed that made them
 * first writes nothing the answers do not show).
 */
export const orderBody = async (target: Target, key: string, fields: Record<string, unknown> = {}) => {
  const lead = await firstOr(target, key, "/api/v1/leads", "leads", () => createLead(target, key))
  const product = await firstOr(target, key, "/api/v1/catalogue/products?active=true", "products", () =>
    createProduct(target, key)
  )
  return {
    lead_id: lead.id,
    items: [
      { product_id: product.id, quantity: 1 },
      { name: "Gift wrap", unit_amount: 300, quantity: 1 }
    ],
    ...fields
  }
}

/** POST /api/v1/orders, expecting 201. */
export const createOrder = async (target: Target, key: string, body: Record<string, unknown>) => {
  const reply = await call(target, "POST", "/api/v1/orders", { auth: key, json: body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body as Record<string, any> & { id: string; version: number }
}

export const readOrder = async (target: Target, key: string, id: string) => {
  const reply = await call(target, "GET", `/api/v1/orders/${id}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Record<string, any>
}

const isolation: Resource.Isolation = {
  noun: "order",
  make: async ({ target }, key) => (await createOrder(target, key, await orderBody(target, key))).id,
  read: ({ target }, key, id) => readOrder(target, key, id),
  unknownId: () => neverIssued("ord")
}

const at = (id: string) => ({ path: `/api/v1/orders/${id}` })

export const resource: Resource.Resource = {
  name: "orders",
  routes: [
    {
      method: "GET",
      path: "/api/v1/orders",
      needs: ["orders:read", "orders:write"],
      succeeds: 200,
      lists: "orders",
      request: async () => ({ path: "/api/v1/orders" })
    },
    {
      method: "POST",
      path: "/api/v1/orders",
      needs: ["orders:write"],
      succeeds: 201,
      request: async ({ target }, account) => {
        const note = `Order ${crypto.randomUUID()}`
        return {
          path: "/api/v1/orders",
          json: await orderBody(target, account.ownerKey, { note }),
          unchanged: async () => {
            const orders = await listAll(target, account.ownerKey, "/api/v1/orders", "orders")
            expect(orders.map((o: { note: string | null }) => o.note)).not.toContain(note)
          }
        }
      }
    },
    {
      method: "GET",
      path: "/api/v1/orders/{id}",
      needs: ["orders:read", "orders:write"],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      method: "PATCH",
      path: "/api/v1/orders/{id}",
      needs: ["orders:write"],
      succeeds: 200,
      addresses: (id) => ({ ...at(id), json: { status: "cancelled" } }),
      request: Resource.aimedAt(isolation, (id) => ({ ...at(id), json: { status: "confirmed" } }))
    }
  ],
  isolation,
  ledger: {
    tables: [{ name: "orders", account: "account_id", rows: Resource.perOperation({ "POST /api/v1/orders": 1 }) }],
    ids: {
      field: "id",
      create: "POST /api/v1/orders",
      update: "PATCH /api/v1/orders/{id}",
      list: { path: "/api/v1/orders", field: "orders" },
      parameters: ["/api/v1/orders/{id} id"]
    },
    emits: {
      "POST /api/v1/orders": "order.created",
      // One event when either status moved, none for a note, tracking or metadata change.
      "PATCH /api/v1/orders/{id}": (after, before) =>
        before !== undefined && (after.status !== before.status || after.payment_status !== before.payment_status)
          ? ["order.status_changed"]
          : []
    }
  }
}

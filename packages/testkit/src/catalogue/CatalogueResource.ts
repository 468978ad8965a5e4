import { expect } from "vitest"
import { call } from "../Http.ts"
import { listAll, neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

/** The fields of a product on the wire, sorted (docs/contract-commerce-ai.md §2). */
export const PRODUCT_KEYS = [
  "active",
  "attributes",
  "created_at",
  "currency",
  "description",
  "id",
  "image_url",
  "name",
  "sku",
  "stock",
  "unit_amount",
  "updated_at",
  "url",
  "version"
]

/** A SKU no other product of this process has. */
export const nextSku = () => `SKU-${crypto.randomUUID().slice(0, 13)}`

export const productBody = (fields: Record<string, unknown> = {}) => ({
  sku: nextSku(),
  name: "Pão francês (10 un.)",
  unit_amount: 1290,
  currency: "BRL",
  stock: 1000,
  ...fields
})

/** POST /api/v1/catalogue/products with a full-access key, expecting 201. */
export const createProduct = async (target: Target, key: string, fields: Record<string, unknown> = {}) => {
  const reply = await call(target, "POST", "/api/v1/catalogue/products", { auth: key, json: productBody(fields) })
  expect(reply.status, reply.text).toBe(201)
  return reply.body as Record<string, any> & { id: string; sku: string; version: number }
}

export const readProduct = async (target: Target, key: string, id: string) => {
  const reply = await call(target, "GET", `/api/v1/catalogue/products/${id}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Record<string, any>
}

const isolation: Resource.Isolation = {
  noun: "product",
  make: async ({ target }, key) => (await createProduct(target, key)).id,
  read: ({ target }, key, id) => readProduct(target, key, id),
  unknownId: () => neverIssued("prod")
}

const at = (id: string) => ({ path: `/api/v1/catalogue/products/${id}` })

export const resource: Resource.Resource = {
  name: "products",
  routes: [
    {
      method: "GET",
      path: "/api/v1/catalogue/products",
      needs: ["catalogue:read"],
      succeeds: 200,
      lists: "products",
      request: async () => ({ path: "/api/v1/catalogue/products" })
    },
    {
      method: "POST",
      path: "/api/v1/catalogue/products",
      needs: "full access",
      succeeds: 201,
      request: async ({ target }, account) => {
        const body = productBody()
        return {
          path: "/api/v1/catalogue/products",
          json: body,
          unchanged: async () => {
            const products = await listAll(target, account.ownerKey, "/api/v1/catalogue/products", "products")
            expect(products.map((p: { sku: string }) => p.sku)).not.toContain(body.sku)
          }
        }
      }
    },
    {
      method: "GET",
      path: "/api/v1/catalogue/products/{id}",
      needs: ["catalogue:read"],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      method: "PATCH",
      path: "/api/v1/catalogue/products/{id}",
      needs: "full access",
      succeeds: 200,
      addresses: (id) => ({ ...at(id), json: { unit_amount: 1 } }),
      request: Resource.aimedAt(isolation, (id) => ({ ...at(id), json: { unit_amount: 1490 } }))
    },
    {
      method: "DELETE",
      path: "/api/v1/catalogue/products/{id}",
      needs: "full access",
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    }
  ],
  isolation,
  ledger: {
    tables: [
      {
        name: "products",
        account: "account_id",
        rows: Resource.perOperation({
          "POST /api/v1/catalogue/products": 1,
          "DELETE /api/v1/catalogue/products/{id}": -1
        })
      },
      {
        name: "product_stock",
        account: "account_id",
        rows: Resource.uncounted(
          '16 stripes per tracked product, made, kept or removed as a create or a PATCH sets `stock` (docs/performance.md, "One hot product"): a PATCH\'s answer does not say whether the product was tracked before'
        )
      }
    ],
    ids: {
      field: "id",
      create: "POST /api/v1/catalogue/products",
      remove: "DELETE /api/v1/catalogue/products/{id}",
      list: { path: "/api/v1/catalogue/products", field: "products" },
      parameters: ["/api/v1/catalogue/products/{id} id"]
    }
  }
}

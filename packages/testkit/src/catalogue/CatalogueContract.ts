import { SCOPES } from "@leadline/core/auth/Scopes"
import { beforeAll, describe, expect, it } from "vitest"
import { makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden, listAll, notFound } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import { createProduct, nextSku, PRODUCT_KEYS, productBody, readProduct } from "./CatalogueResource.ts"

const PATH = "/api/v1/catalogue/products"

/** The catalogue (docs/contract-commerce-ai.md §1–2): money in minor units, versions with ETag and If-Match, full-access writes. */
export const contract = (context: ContractContext) => {
  describe("catalogue", () => {
    const owner = () => context.acme.ownerKey
    const post = (json: unknown, key = owner()) => call(context.target, "POST", PATH, { auth: key, json })
    const patch = (id: string, json: unknown, headers: Record<string, string> = {}, key = owner()) =>
      call(context.target, "PATCH", `${PATH}/${id}`, { auth: key, json, headers })

    let every: string
    let reader: string
    beforeAll(async () => {
      every = (await makeKey(context.target, context.acme.accountId, { scopes: [...SCOPES] })).apiKey
      reader = (await makeKey(context.target, context.acme.accountId, { scopes: ["catalogue:read"] })).apiKey
    })

    it("creates a product in minor units with an upper-case currency, version 1 and its ETag", async () => {
      const sku = nextSku()
      const reply = await post({ sku, name: "Café 250 g", unit_amount: 1899, currency: "eur" })
      expect(reply.status, reply.text).toBe(201)
      expect(Object.keys(reply.body).sort()).toEqual(PRODUCT_KEYS)
      expect(reply.body).toMatchObject({
        sku,
        name: "Café 250 g",
        description: null,
        unit_amount: 1899,
        currency: "EUR",
        stock: null,
        active: true,
        image_url: null,
        url: null,
        attributes: {},
        version: 1
      })
      expect(reply.body.id).toMatch(/^prod_[0-9a-z]{26}$/)
      expect(reply.headers.get("etag")).toBe('"1"')
      const read = await call(context.target, "GET", `${PATH}/${reply.body.id}`, { auth: reader })
      expect([read.status, read.body, read.headers.get("etag")]).toEqual([200, reply.body, '"1"'])
    })

    it("refuses a decimal price, an unknown currency, negative stock and a non-https URL with details, writing nothing", async () => {
      const sku = nextSku()
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ unit_amount: 9.99 }, "unit_amount"],
        [{ unit_amount: -1 }, "unit_amount"],
        [{ currency: "XYZ" }, "currency"],
        [{ stock: -1 }, "stock"],
        [{ stock: 1.5 }, "stock"],
        [{ image_url: "http://cdn.example.com/a.jpg" }, "image_url"],
        [{ sku: "-starts-with-a-dash" }, "sku"]
      ]
      for (const [fields, path] of cases) {
        const reply = await post(productBody({ sku, ...fields }))
        expect(reply.status, JSON.stringify(fields)).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details.map((d: { path: string }) => d.path)).toContain(path)
      }
      const listed = await listAll(context.target, owner(), `${PATH}?sku=${sku}`, "products")
      expect(listed).toEqual([])
    })

    it("keeps a SKU unique in its account, not across accounts", async () => {
      const first = await createProduct(context.target, owner())
      const again = await post(productBody({ sku: first.sku }))
      expect([again.status, again.body]).toEqual([
        409,
        { error: `A product with sku ${first.sku} already exists`, code: "conflict" }
      ])
      const elsewhere = await post(productBody({ sku: first.sku }), context.other.ownerKey)
      expect(elsewhere.status, elsewhere.text).toBe(201)
      const other = await createProduct(context.target, owner())
      const taken = await patch(other.id, { sku: first.sku })
      expect([taken.status, taken.body.code]).toEqual([409, "conflict"])
    })

    it("lists newest first with the active, sku and q filters", async () => {
      const word = `Pão${crypto.randomUUID().slice(0, 6)}`
      const a = await createProduct(context.target, owner(), { name: `${word} francês` })
      const b = await createProduct(context.target, owner(), { name: `Bolo de ${word.toUpperCase()}`, active: false })
      const byQ = await listAll(
        context.target,
        reader,
        `${PATH}?q=${encodeURIComponent(word.toLowerCase())}`,
        "products"
      )
      expect(byQ.map((p) => p.id)).toEqual([b.id, a.id])
      const active = await listAll(
        context.target,
        reader,
        `${PATH}?active=true&q=${encodeURIComponent(word)}`,
        "products"
      )
      expect(active.map((p) => p.id)).toEqual([a.id])
      const inactive = await listAll(
        context.target,
        reader,
        `${PATH}?active=false&q=${encodeURIComponent(word)}`,
        "products"
      )
      expect(inactive.map((p) => p.id)).toEqual([b.id])
      const bySku = await listAll(context.target, reader, `${PATH}?sku=${a.sku}`, "products")
      expect(bySku.map((p) => p.id)).toEqual([a.id])
      const bySkuText = await listAll(context.target, reader, `${PATH}?q=${b.sku.slice(4).toLowerCase()}`, "products")
      expect(bySkuText.map((p) => p.id)).toEqual([b.id])
    })

    it("lets catalogue:read read and only a full-access key write, not even one with all 16 scopes", async () => {
      const product = await createProduct(context.target, owner())
      for (const key of [reader, every]) {
        const list = await call(context.target, "GET", PATH, { auth: key })
        expect(list.status).toBe(200)
        const created = await post(productBody(), key)
        expect([created.status, created.body]).toEqual([403, forbidden("full access")])
        const changed = await patch(product.id, { unit_amount: 1 }, {}, key)
        expect([changed.status, changed.body]).toEqual([403, forbidden("full access")])
        const removed = await call(context.target, "DELETE", `${PATH}/${product.id}`, { auth: key })
        expect([removed.status, removed.body]).toEqual([403, forbidden("full access")])
      }
      const leads = await call(context.target, "GET", PATH, { auth: context.acme.keys.leadsRead!.apiKey })
      expect([leads.status, leads.body]).toEqual([403, forbidden("catalogue:read")])
      expect(await readProduct(context.target, owner(), product.id)).toEqual(product)
    })

    it("moves the version with each change, keeps it for no change, and honours If-Match", async () => {
      const product = await createProduct(context.target, owner())
      const changed = await patch(product.id, { unit_amount: 1490, description: "Fresh" })
      expect([changed.status, changed.body.version, changed.headers.get("etag")]).toEqual([200, 2, '"2"'])
      expect(changed.body).toMatchObject({ unit_amount: 1490, description: "Fresh", sku: product.sku })
      const same = await patch(product.id, { unit_amount: 1490 })
      expect([same.status, same.body]).toEqual([200, changed.body])
      const stale = await patch(product.id, { name: "Stale" }, { "if-match": '"1"' })
      expect([stale.status, stale.body]).toEqual([
        412,
        { error: 'If-Match does not match the current version (ETag "2")', code: "precondition_failed" }
      ])
      expect(await readProduct(context.target, owner(), product.id)).toEqual(changed.body)
      const star = await patch(product.id, { name: "Any version" }, { "if-match": "*" })
      expect([star.status, star.body.version]).toEqual([200, 3])
      const fresh = await patch(product.id, { stock: 7 }, { "if-match": '"3"' })
      expect([fresh.status, fresh.body.stock, fresh.body.version]).toEqual([200, 7, 4])
    })

    it("lets one of two changes with the same If-Match through", async () => {
      const product = await createProduct(context.target, owner())
      const replies = await Promise.all([
        patch(product.id, { unit_amount: 100 }, { "if-match": '"1"' }),
        patch(product.id, { unit_amount: 200 }, { "if-match": '"1"' })
      ])
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 412])
      const winner = replies.find((reply) => reply.status === 200)!
      expect(await readProduct(context.target, owner(), product.id)).toEqual(winner.body)
    })

    it("deletes a product; it is then not found, and another account never finds it", async () => {
      const product = await createProduct(context.target, owner())
      const other = await call(context.target, "GET", `${PATH}/${product.id}`, { auth: context.other.ownerKey })
      expect([other.status, other.body]).toEqual([404, notFound("product", product.id)])
      const removed = await call(context.target, "DELETE", `${PATH}/${product.id}`, { auth: owner() })
      expect([removed.status, removed.body]).toEqual([200, { id: product.id, deleted: true }])
      const gone = await call(context.target, "GET", `${PATH}/${product.id}`, { auth: owner() })
      expect([gone.status, gone.body]).toEqual([404, notFound("product", product.id)])
    })
  })
}

import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Latch, Layer, Result } from "effect"
import type { Product } from "@leadline/core/catalogue/Product"
import { skuTakenMessage } from "@leadline/core/catalogue/Product"
import { CatalogueRepo } from "@leadline/core/catalogue/CatalogueRepo"
import { Conflict, InsufficientStock } from "@leadline/core/Errors"
import type { Order } from "@leadline/core/orders/Order"
import { OrdersRepo } from "@leadline/core/orders/OrdersRepo"
import { Transactor } from "@leadline/core/Transactor"
import * as MemoryCatalogue from "../src/catalogue/MemoryCatalogue.ts"
import * as MemoryStores from "../src/MemoryStores.ts"
import * as MemoryTransaction from "../src/MemoryTransaction.ts"
import * as MemoryOrders from "../src/orders/MemoryOrders.ts"

const stores = Layer.mergeAll(MemoryCatalogue.layer, MemoryOrders.layer, MemoryTransaction.layer)

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString()
const CREATED = at(0)
const NOW = at(30)

const product = (id: string, sku: string, stock: number | null, overrides: Partial<Product> = {}): Product => ({
  id,
  sku,
  name: `Product ${sku}`,
  description: null,
  unit_amount: 1000,
  currency: "EUR",
  stock,
  active: true,
  image_url: null,
  url: null,
  attributes: {},
  version: 1,
  created_at: CREATED,
  updated_at: CREATED,
  ...overrides
})

const order = (id: string, overrides: Partial<Order> = {}): Order => ({
  id,
  lead_id: "lead_1",
  status: "pending",
  payment_status: "unpaid",
  currency: "EUR",
  items: [],
  amount_subtotal: 0,
  amount_shipping: 0,
  amount_discount: 0,
  amount_total: 0,
  note: null,
  tracking: null,
  source: "api",
  whatsapp_message_id: null,
  metadata: {},
  version: 1,
  created_at: CREATED,
  updated_at: CREATED,
  confirmed_at: null,
  shipped_at: null,
  delivered_at: null,
  cancelled_at: null,
  paid_at: null,
  refunded_at: null,
  ...overrides
})

/** What a stock failure says, without its tag. */
const shortOf = (error: InsufficientStock) => ({
  sku: error.sku,
  available: error.available,
  requested: error.requested
})

const ALL = { offset: 0, limit: 100 }
const ids = (items: ReadonlyArray<{ readonly id: string }>) => items.map((item) => item.id)

/** Stock and version of a product, to compare in one assertion. */
const stockOf = (accountId: string, id: string) =>
  Effect.gen(function* () {
    const found = yield* (yield* CatalogueRepo).find(accountId, id)
    return found === undefined
      ? undefined
      : { stock: found.stock, version: found.version, updated_at: found.updated_at }
  })

describe("MemoryCatalogue", () => {
  it.effect("keeps a SKU unique in its account, and two accounts may share one", () =>
    Effect.gen(function* () {
      const repo = yield* CatalogueRepo
      yield* repo.insert("acc_1", product("prod_a", "SKU-1", 5))
      yield* repo.insert("acc_1", product("prod_b", "SKU-2", 5))
      yield* repo.insert("acc_2", product("prod_c", "SKU-1", 5))

      const taken = yield* Effect.flip(repo.insert("acc_1", product("prod_d", "SKU-1", 5)))
      assert.instanceOf(taken, Conflict)
      assert.strictEqual(taken.message, skuTakenMessage("SKU-1"))
      assert.isUndefined(yield* repo.find("acc_1", "prod_d"))

      const renamed = yield* Effect.flip(repo.update("acc_1", product("prod_b", "SKU-1", 5, { version: 2 })))
      assert.strictEqual(renamed.message, skuTakenMessage("SKU-1"))
      assert.strictEqual((yield* repo.find("acc_1", "prod_b"))?.sku, "SKU-2")

      // Its own SKU is no conflict; a product of another account is not found.
      const kept = product("prod_b", "SKU-2", 7, { version: 2 })
      assert.deepStrictEqual(yield* repo.update("acc_1", kept), kept)
      assert.isUndefined(yield* repo.update("acc_2", kept))
      assert.deepStrictEqual(yield* repo.find("acc_1", "prod_b"), kept)

      // A removed product's SKU is free again.
      assert.strictEqual((yield* repo.remove("acc_1", "prod_a"))?.id, "prod_a")
      assert.isUndefined(yield* repo.remove("acc_1", "prod_a"))
      yield* repo.insert("acc_1", product("prod_e", "SKU-1", null))
      assert.deepStrictEqual(ids((yield* repo.list("acc_1", {}, ALL)).items), ["prod_e", "prod_b"])
      assert.deepStrictEqual(ids((yield* repo.list("acc_2", {}, ALL)).items), ["prod_c"])
    }).pipe(Effect.provide(stores))
  )

  it.effect("lists newest first with the filters, and finds many by id or SKU within the account", () =>
    Effect.gen(function* () {
      const repo = yield* CatalogueRepo
      yield* repo.insert("acc_1", product("prod_a", "TEE-RED", 5, { name: "Red tee", created_at: at(1) }))
      yield* repo.insert(
        "acc_1",
        product("prod_b", "TEE-BLUE", 5, { name: "Blue tee", active: false, created_at: at(2) })
      )
      yield* repo.insert("acc_1", product("prod_c", "MUG", null, { name: "Mug", created_at: at(2) }))
      yield* repo.insert("acc_2", product("prod_z", "TEE-GREEN", 5, { created_at: at(3) }))

      const all = yield* repo.list("acc_1", {}, { offset: 1, limit: 1 })
      assert.deepStrictEqual({ ids: ids(all.items), total: all.total }, { ids: ["prod_b"], total: 3 })
      const active = yield* repo.list("acc_1", { active: true }, ALL)
      assert.deepStrictEqual({ ids: ids(active.items), total: active.total }, { ids: ["prod_c", "prod_a"], total: 2 })
      assert.deepStrictEqual(ids((yield* repo.list("acc_1", { q: "tee" }, ALL)).items), ["prod_b", "prod_a"])
      assert.deepStrictEqual(ids((yield* repo.list("acc_1", { q: "mug" }, ALL)).items), ["prod_c"])
      assert.deepStrictEqual(ids((yield* repo.list("acc_1", { sku: "TEE-RED" }, ALL)).items), ["prod_a"])
      const none = yield* repo.list("acc_1", { sku: "TEE-GREEN" }, ALL)
      assert.deepStrictEqual(none, { items: [], total: 0 })

      const many = yield* repo.findMany("acc_1", {
        ids: ["prod_a", "prod_z", "prod_x"],
        skus: ["TEE-RED", "MUG", "TEE-GREEN"]
      })
      assert.sameMembers(ids(many), ["prod_a", "prod_c"])
    }).pipe(Effect.provide(stores))
  )

  it.effect("takes stock all or nothing: a short product fails the first such line in id order and takes nothing", () =>
    Effect.gen(function* () {
      const repo = yield* CatalogueRepo
      yield* repo.insert("acc_1", product("prod_a", "A", 5))
      yield* repo.insert("acc_1", product("prod_b", "B", 1))
      yield* repo.insert("acc_1", product("prod_c", "C", 0))
      yield* repo.insert("acc_1", product("prod_u", "U", null))

      const short = yield* Effect.flip(
        repo.takeStock(
          "acc_1",
          [
            { productId: "prod_c", quantity: 1 },
            { productId: "prod_a", quantity: 2 },
            { productId: "prod_b", quantity: 1 },
            { productId: "prod_b", quantity: 1 }
          ],
          NOW
        )
      )
      assert.instanceOf(short, InsufficientStock)
      assert.deepStrictEqual(shortOf(short), { sku: "B", available: 1, requested: 2 })
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_a"), { stock: 5, version: 1, updated_at: CREATED })
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_b"), { stock: 1, version: 1, updated_at: CREATED })

      // Moves of one product merge; untracked and unknown products are left alone.
      yield* repo.takeStock(
        "acc_1",
        [
          { productId: "prod_a", quantity: 2 },
          { productId: "prod_u", quantity: 1000 },
          { productId: "prod_a", quantity: 3 },
          { productId: "prod_gone", quantity: 1 },
          { productId: "prod_b", quantity: 1 }
        ],
        NOW
      )
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_a"), { stock: 0, version: 2, updated_at: NOW })
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_b"), { stock: 0, version: 2, updated_at: NOW })
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_u"), { stock: null, version: 1, updated_at: CREATED })

      // The account is part of the key: another account's product of the same id is not touched.
      yield* repo.insert("acc_2", product("prod_a", "A", 1))
      yield* repo.takeStock("acc_2", [{ productId: "prod_a", quantity: 1 }], NOW)
      assert.deepStrictEqual(yield* stockOf("acc_2", "prod_a"), { stock: 0, version: 2, updated_at: NOW })
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_a"), { stock: 0, version: 2, updated_at: NOW })
    }).pipe(Effect.provide(stores))
  )

  it.effect("sells the last units once: 20 concurrent transactions take 1 of 5", () =>
    Effect.gen(function* () {
      const repo = yield* CatalogueRepo
      const transactor = yield* Transactor
      yield* repo.insert("acc_1", product("prod_a", "A", 5))

      const results = yield* Effect.all(
        Array.from({ length: 20 }, () =>
          Effect.result(
            transactor.withTransaction(
              // Holding the row across a yield lets the others run into its lock.
              Effect.andThen(repo.takeStock("acc_1", [{ productId: "prod_a", quantity: 1 }], NOW), Effect.yieldNow)
            )
          )
        ),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter(Result.isSuccess).length, 5)
      const failures = results.flatMap((result) => (Result.isFailure(result) ? [result.failure] : []))
      assert.strictEqual(failures.length, 15)
      for (const failure of failures) assert.deepStrictEqual(shortOf(failure), { sku: "A", available: 0, requested: 1 })
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_a"), { stock: 0, version: 6, updated_at: NOW })
    }).pipe(Effect.provide(stores))
  )

  it.effect("gives the stock back when the transaction fails after taking it", () =>
    Effect.gen(function* () {
      const repo = yield* CatalogueRepo
      const orders = yield* OrdersRepo
      const transactor = yield* Transactor
      yield* repo.insert("acc_1", product("prod_a", "A", 5))
      yield* repo.insert("acc_1", product("prod_b", "B", 2))

      const exit = yield* Effect.exit(
        transactor.withTransaction(
          Effect.gen(function* () {
            yield* repo.takeStock(
              "acc_1",
              [
                { productId: "prod_a", quantity: 3 },
                { productId: "prod_b", quantity: 2 }
              ],
              NOW
            )
            yield* orders.insert("acc_1", order("ord_1"))
            return yield* Effect.fail("boom")
          })
        )
      )
      assert.deepStrictEqual(exit, Exit.fail("boom"))
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_a"), { stock: 5, version: 1, updated_at: CREATED })
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_b"), { stock: 2, version: 1, updated_at: CREATED })
      assert.isUndefined(yield* orders.find("acc_1", "ord_1"))

      // The rows were let go: the next order takes them at once.
      yield* transactor.withTransaction(repo.takeStock("acc_1", [{ productId: "prod_b", quantity: 2 }], NOW))
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_b"), { stock: 0, version: 2, updated_at: NOW })
    }).pipe(Effect.provide(stores))
  )

  it.effect("returns stock to tracked products still in the catalogue", () =>
    Effect.gen(function* () {
      const repo = yield* CatalogueRepo
      yield* repo.insert("acc_1", product("prod_a", "A", 3, { version: 4 }))
      yield* repo.insert("acc_1", product("prod_u", "U", null))

      yield* repo.returnStock(
        "acc_1",
        [
          { productId: "prod_a", quantity: 1 },
          { productId: "prod_u", quantity: 2 },
          { productId: "prod_gone", quantity: 1 },
          { productId: "prod_a", quantity: 2 }
        ],
        NOW
      )
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_a"), { stock: 6, version: 5, updated_at: NOW })
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_u"), { stock: null, version: 1, updated_at: CREATED })
      assert.isUndefined(yield* repo.find("acc_1", "prod_gone"))
    }).pipe(Effect.provide(stores))
  )

  it.effect("makes a stock take wait for a transaction that read the product for update, and check what it wrote", () =>
    Effect.gen(function* () {
      const repo = yield* CatalogueRepo
      const transactor = yield* Transactor
      yield* repo.insert("acc_1", product("prod_a", "A", 5))
      const read = yield* Latch.make()
      const write = yield* Latch.make()

      const patch = yield* Effect.forkChild(
        transactor.withTransaction(
          Effect.gen(function* () {
            const current = (yield* repo.findForUpdate("acc_1", "prod_a"))!
            yield* read.open
            yield* write.await
            yield* repo.update("acc_1", { ...current, stock: 1, version: current.version + 1 })
          })
        )
      )
      yield* read.await
      const take = yield* Effect.forkChild(
        transactor.withTransaction(repo.takeStock("acc_1", [{ productId: "prod_a", quantity: 2 }], NOW))
      )
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow
      assert.deepStrictEqual(yield* stockOf("acc_1", "prod_a"), { stock: 5, version: 1, updated_at: CREATED })

      yield* write.open
      yield* Fiber.join(patch)
      const short = yield* Effect.flip(Fiber.join(take))
      assert.deepStrictEqual(shortOf(short), { sku: "A", available: 1, requested: 2 })
      assert.deepStrictEqual((yield* stockOf("acc_1", "prod_a"))?.stock, 1)
    }).pipe(Effect.provide(stores))
  )
})

describe("MemoryOrders", () => {
  it.effect("lets a WhatsApp message place one order per account", () =>
    Effect.gen(function* () {
      const repo = yield* OrdersRepo
      const transactor = yield* Transactor
      const placed = order("ord_1", { source: "whatsapp", whatsapp_message_id: "wamid.1" })
      yield* repo.insert("acc_1", placed)
      // Orders from the API have no wamid, and many of them are fine.
      yield* repo.insert("acc_1", order("ord_2"))
      yield* repo.insert("acc_1", order("ord_3"))
      yield* repo.insert("acc_2", order("ord_4", { source: "whatsapp", whatsapp_message_id: "wamid.1" }))

      const twice = yield* Effect.flip(
        repo.insert("acc_1", order("ord_5", { source: "whatsapp", whatsapp_message_id: "wamid.1" }))
      )
      assert.instanceOf(twice, Conflict)
      assert.strictEqual(twice.message, "This WhatsApp message placed an order already")
      assert.isUndefined(yield* repo.find("acc_1", "ord_5"))

      assert.deepStrictEqual(yield* repo.findByWhatsAppMessage("acc_1", "wamid.1"), placed)
      assert.strictEqual((yield* repo.findByWhatsAppMessage("acc_2", "wamid.1"))?.id, "ord_4")
      assert.isUndefined(yield* repo.findByWhatsAppMessage("acc_3", "wamid.1"))

      // An order rolled back frees its wamid.
      const exit = yield* Effect.exit(
        transactor.withTransaction(
          Effect.andThen(
            repo.insert("acc_1", order("ord_6", { source: "whatsapp", whatsapp_message_id: "wamid.2" })),
            Effect.fail("boom")
          )
        )
      )
      assert.deepStrictEqual(exit, Exit.fail("boom"))
      assert.isUndefined(yield* repo.findByWhatsAppMessage("acc_1", "wamid.2"))
      yield* repo.insert("acc_1", order("ord_7", { source: "whatsapp", whatsapp_message_id: "wamid.2" }))
      assert.strictEqual((yield* repo.findByWhatsAppMessage("acc_1", "wamid.2"))?.id, "ord_7")
    }).pipe(Effect.provide(stores))
  )

  it.effect("lists newest first with the filters: created_after inclusive, created_before exclusive", () =>
    Effect.gen(function* () {
      const repo = yield* OrdersRepo
      yield* repo.insert("acc_1", order("ord_a", { created_at: at(1) }))
      yield* repo.insert("acc_1", order("ord_b", { created_at: at(2), status: "confirmed", lead_id: "lead_2" }))
      yield* repo.insert("acc_1", order("ord_c", { created_at: at(3), status: "confirmed", payment_status: "paid" }))
      yield* repo.insert("acc_1", order("ord_d", { created_at: at(4), lead_id: "lead_2" }))
      yield* repo.insert("acc_2", order("ord_z", { created_at: at(3) }))

      const list = (filter: Parameters<typeof repo.list>[1], page = ALL) =>
        Effect.map(repo.list("acc_1", filter, page), (slice) => ({ ids: ids(slice.items), total: slice.total }))
      assert.deepStrictEqual(yield* list({}), { ids: ["ord_d", "ord_c", "ord_b", "ord_a"], total: 4 })
      assert.deepStrictEqual(yield* list({}, { offset: 1, limit: 2 }), { ids: ["ord_c", "ord_b"], total: 4 })
      assert.deepStrictEqual(yield* list({ status: "confirmed" }), { ids: ["ord_c", "ord_b"], total: 2 })
      assert.deepStrictEqual(yield* list({ status: "confirmed" }, { offset: 1, limit: 5 }), {
        ids: ["ord_b"],
        total: 2
      })
      assert.deepStrictEqual(yield* list({ payment_status: "paid" }), { ids: ["ord_c"], total: 1 })
      assert.deepStrictEqual(yield* list({ lead_id: "lead_2" }), { ids: ["ord_d", "ord_b"], total: 2 })
      assert.deepStrictEqual(yield* list({ created_after: at(2), created_before: at(4) }), {
        ids: ["ord_c", "ord_b"],
        total: 2
      })
      assert.deepStrictEqual(yield* list({ lead_id: "lead_2", created_after: at(3) }), { ids: ["ord_d"], total: 1 })
      assert.deepStrictEqual(yield* list({ status: "cancelled" }), { ids: [], total: 0 })
    }).pipe(Effect.provide(stores))
  )

  it.effect("updates an order, and findForUpdate holds it for one transaction at a time", () =>
    Effect.gen(function* () {
      const repo = yield* OrdersRepo
      const transactor = yield* Transactor
      yield* repo.insert("acc_1", order("ord_1"))

      // Two transitions from the same version: the second reads what the first wrote.
      const confirm = (log: Array<number>) =>
        transactor.withTransaction(
          Effect.gen(function* () {
            const current = (yield* repo.findForUpdate("acc_1", "ord_1"))!
            log.push(current.version)
            yield* Effect.yieldNow
            yield* repo.update("acc_1", {
              ...current,
              status: "confirmed",
              version: current.version + 1,
              updated_at: NOW
            })
          })
        )
      const seen: Array<number> = []
      yield* Effect.all([confirm(seen), confirm(seen)], { concurrency: "unbounded" })
      assert.deepStrictEqual(seen, [1, 2])
      const stored = yield* repo.find("acc_1", "ord_1")
      assert.deepStrictEqual({ status: stored?.status, version: stored?.version }, { status: "confirmed", version: 3 })
      assert.isUndefined(yield* repo.findForUpdate("acc_1", "ord_missing"))
      assert.isUndefined(yield* repo.find("acc_2", "ord_1"))
    }).pipe(Effect.provide(stores))
  )
})

describe("MemoryStores", () => {
  it.effect("wires the products and orders stores", () =>
    Effect.gen(function* () {
      yield* (yield* CatalogueRepo).insert("acc_1", product("prod_a", "A", 1))
      yield* (yield* OrdersRepo).insert("acc_1", order("ord_1"))
      assert.strictEqual((yield* (yield* CatalogueRepo).find("acc_1", "prod_a"))?.sku, "A")
      assert.strictEqual((yield* (yield* OrdersRepo).find("acc_1", "ord_1"))?.id, "ord_1")
    }).pipe(Effect.provide(MemoryStores.layer))
  )
})

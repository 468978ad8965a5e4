import { randomUUID } from "node:crypto"
import { Deferred, Effect, Exit, Fiber, Layer, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsRepo } from "@leadline/core/accounts/AccountsRepo"
import { type Product, skuTakenMessage } from "@leadline/core/catalogue/Product"
import { CatalogueRepo } from "@leadline/core/catalogue/CatalogueRepo"
import { Conflict, InsufficientStock } from "@leadline/core/Errors"
import type { Order } from "@leadline/core/orders/Order"
import { OrdersRepo } from "@leadline/core/orders/OrdersRepo"
import * as SqlAccounts from "@leadline/sql-adapter/accounts/SqlAccounts"
import * as SqlCatalogue from "@leadline/sql-adapter/catalogue/SqlCatalogue"
import * as Database from "@leadline/sql-adapter/Database"
import * as SqlOrders from "@leadline/sql-adapter/orders/SqlOrders"
import * as UnitOfWork from "@leadline/sql-adapter/UnitOfWork"
import * as TestDatabase from "../src/TestDatabase.ts"

/** The SQL product and order stores, called directly on a real database (PGlite, or TEST_DATABASE_URL's server). */

type Services = SqlClient.SqlClient | AccountsRepo | CatalogueRepo | OrdersRepo

const database = await TestDatabase.make()
let runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect)
/** The error the effect fails with (a success fails the test). */
const failure = <A, E>(effect: Effect.Effect<A, E, Services>) => run(Effect.flip(effect))
const products = <A, E>(use: (repo: CatalogueRepo["Service"]) => Effect.Effect<A, E>) =>
  run(Effect.flatMap(CatalogueRepo, use))
const orders = <A, E>(use: (repo: OrdersRepo["Service"]) => Effect.Effect<A, E>) => run(Effect.flatMap(OrdersRepo, use))

beforeAll(async () => {
  runtime = ManagedRuntime.make(
    Layer.mergeAll(SqlAccounts.layer, SqlCatalogue.layer, SqlOrders.layer).pipe(
      Layer.provideMerge(Database.layer(database.config))
    )
  )
}, 60_000)
afterAll(async () => {
  await runtime?.dispose()
  await database.dispose()
})

const makeAccount = () =>
  run(
    Effect.gen(function* () {
      const accounts = yield* AccountsRepo
      const id = randomUUID()
      const owner = randomUUID()
      const createdAt = new Date().toISOString()
      yield* accounts.insertAccount(
        { id, name: "Catalogue test", ownerUserId: owner, planId: "free", subscriptionStatus: "active", createdAt },
        { id: owner, accountId: id, role: "owner", createdAt }
      )
      return id
    })
  )

let sequence = 0
/** Made one millisecond apart, so newest first is the reverse of the order they were made in. */
const instant = (n: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, 0, n)).toISOString()

const product = (fields: Partial<Product> = {}): Product => {
  const n = ++sequence
  return {
    id: `prod_${String(n).padStart(8, "0")}`,
    sku: `SKU-${n}`,
    name: `Product ${n}`,
    description: null,
    unit_amount: 1999,
    currency: "EUR",
    stock: null,
    active: true,
    image_url: null,
    url: null,
    attributes: {},
    version: 1,
    created_at: instant(n),
    updated_at: instant(n),
    ...fields
  }
}

const order = (fields: Partial<Order> = {}): Order => {
  const n = ++sequence
  return {
    id: `ord_${String(n).padStart(8, "0")}`,
    lead_id: "ld_1",
    status: "pending",
    payment_status: "unpaid",
    currency: "EUR",
    items: [
      {
        id: `li_${n}a`,
        product_id: "prod_x",
        sku: "SKU-X",
        name: "Shirt",
        unit_amount: 4_000_000_000,
        quantity: 2,
        amount_total: 8_000_000_000
      },
      {
        id: `li_${n}b`,
        product_id: null,
        sku: null,
        name: "Gift wrap",
        unit_amount: 250,
        quantity: 1,
        amount_total: 250
      }
    ],
    amount_subtotal: 8_000_000_250,
    amount_shipping: 500,
    amount_discount: 100,
    amount_total: 8_000_000_650,
    note: null,
    tracking: null,
    source: "api",
    whatsapp_message_id: null,
    metadata: { channel: "test", nested: { a: [1, 2] } },
    version: 1,
    created_at: instant(n),
    updated_at: instant(n),
    confirmed_at: null,
    shipped_at: null,
    delivered_at: null,
    cancelled_at: null,
    paid_at: null,
    refunded_at: null,
    ...fields
  }
}

describe(`SQL catalogue and orders on ${database.label}`, () => {
  it("stores a product as given, and keeps a SKU unique in its account only", async () => {
    const [a, b] = [await makeAccount(), await makeAccount()]
    const shirt = product({
      sku: "SHIRT-1",
      description: "Cotton",
      unit_amount: 12_345_678_901,
      stock: 7,
      image_url: "https://example.com/shirt.png",
      url: "https://example.com/shirt",
      attributes: { color: "red", sizes: ["S", "M"], fit: { slim: true } }
    })
    await products((repo) => repo.insert(a, shirt))
    expect(await products((repo) => repo.find(a, shirt.id))).toEqual(shirt)
    expect(await products((repo) => repo.find(b, shirt.id))).toBeUndefined()

    const again = await failure(Effect.flatMap(CatalogueRepo, (repo) => repo.insert(a, product({ sku: "SHIRT-1" }))))
    expect(again).toEqual(new Conflict({ message: skuTakenMessage("SHIRT-1") }))
    // Another account may have the same SKU.
    const theirs = product({ sku: "SHIRT-1" })
    await products((repo) => repo.insert(b, theirs))
    expect(await products((repo) => repo.list(b, { sku: "SHIRT-1" }, { limit: 10, offset: 0 }))).toEqual({
      items: [theirs],
      total: 1
    })

    // An update may not take another product's SKU; it may keep its own or take a free one.
    const mug = product({ sku: "MUG-1" })
    await products((repo) => repo.insert(a, mug))
    const taken = await failure(
      Effect.flatMap(CatalogueRepo, (repo) => repo.update(a, { ...mug, sku: "SHIRT-1", version: 2 }))
    )
    expect(taken).toEqual(new Conflict({ message: skuTakenMessage("SHIRT-1") }))
    expect(await products((repo) => repo.find(a, mug.id))).toEqual(mug)
    const renamed: Product = {
      ...mug,
      sku: "MUG-2",
      name: "Big mug",
      stock: 3,
      active: false,
      attributes: { volume_ml: 500 },
      version: 2,
      updated_at: instant(9_000)
    }
    expect(await products((repo) => repo.update(a, renamed))).toEqual(renamed)
    expect(await products((repo) => repo.find(a, mug.id))).toEqual(renamed)
    expect(await products((repo) => repo.update(b, renamed))).toBeUndefined()
    expect(await products((repo) => repo.update(a, { ...shirt, name: "Red shirt", version: 2 }))).toEqual({
      ...shirt,
      name: "Red shirt",
      version: 2
    })
  })

  it("finds by ids or SKUs, locks for update, and removes", async () => {
    const account = await makeAccount()
    const other = await makeAccount()
    const [p1, p2, p3] = [product(), product(), product()]
    for (const p of [p1, p2, p3]) await products((repo) => repo.insert(account, p))
    await products((repo) => repo.insert(other, product({ sku: p3.sku })))

    const found = await products((repo) =>
      repo.findMany(account, { ids: [p1.id, "prod_missing"], skus: [p3.sku, p1.sku, "NOPE"] })
    )
    expect([...found].sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual([p1, p3])
    expect(await products((repo) => repo.findMany(account, { ids: [], skus: [] }))).toEqual([])

    const locked = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(Effect.flatMap(CatalogueRepo, (repo) => repo.findForUpdate(account, p2.id)))
      )
    )
    expect(locked).toEqual(p2)
    expect(await products((repo) => repo.findForUpdate(account, "prod_missing"))).toBeUndefined()

    expect(await products((repo) => repo.remove(account, p2.id))).toEqual(p2)
    expect(await products((repo) => repo.find(account, p2.id))).toBeUndefined()
    expect(await products((repo) => repo.remove(account, p2.id))).toBeUndefined()
    expect(await products((repo) => repo.remove(other, p1.id))).toBeUndefined()
  })

  it("lists newest first with filters: active, exact SKU, and q in the name or SKU with LIKE's symbols as text", async () => {
    const account = await makeAccount()
    const cotton = product({ sku: "SHIRT-1", name: "Red shirt, 100% cotton" })
    const blue = product({ sku: "SHIRT_2", name: "Blue shirt" })
    const mug = product({ sku: "MUG.1", name: "Mug", active: false })
    const slash = product({ sku: "POSTER-1", name: "Poster a\\b" })
    const made = [cotton, blue, mug, slash]
    for (const p of made) await products((repo) => repo.insert(account, p))
    const list = (filter: Parameters<CatalogueRepo["Service"]["list"]>[1], limit = 50, offset = 0) =>
      products((repo) => repo.list(account, filter, { limit, offset }))

    expect(await list({})).toEqual({ items: [slash, mug, blue, cotton], total: 4 })
    expect(await list({}, 2, 1)).toEqual({ items: [mug, blue], total: 4 })
    expect(await list({ active: true })).toEqual({ items: [slash, blue, cotton], total: 3 })
    expect(await list({ active: false })).toEqual({ items: [mug], total: 1 })
    expect(await list({ sku: "SHIRT_2" })).toEqual({ items: [blue], total: 1 })
    expect(await list({ sku: "shirt_2" })).toEqual({ items: [], total: 0 })
    // Case-insensitive, in the name or in the SKU.
    expect(await list({ q: "SHIRT" })).toEqual({ items: [blue, cotton], total: 2 })
    expect(await list({ q: "mug." })).toEqual({ items: [mug], total: 1 })
    // `%`, `_` and `\` match only themselves.
    expect(await list({ q: "%" })).toEqual({ items: [cotton], total: 1 })
    expect(await list({ q: "100%" })).toEqual({ items: [cotton], total: 1 })
    expect(await list({ q: "_" })).toEqual({ items: [blue], total: 1 })
    expect(await list({ q: "\\" })).toEqual({ items: [slash], total: 1 })
    expect(await list({ q: "shirt", active: true }, 1, 0)).toEqual({ items: [blue], total: 2 })
    expect(await list({ q: "shirt", active: false })).toEqual({ items: [], total: 0 })
  })

  it("takes stock all or nothing, merging repeated products and leaving untracked ones alone", async () => {
    const account = await makeAccount()
    const [a, b, untracked] = [product({ stock: 5 }), product({ stock: 1 }), product({ stock: null })]
    for (const p of [a, b, untracked]) await products((repo) => repo.insert(account, p))
    const take = (moves: Parameters<CatalogueRepo["Service"]["takeStock"]>[1], now: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(Effect.flatMap(CatalogueRepo, (repo) => repo.takeStock(account, moves, now)))
      )
    const find = (id: string) => products((repo) => repo.find(account, id))

    // The second line is short: it is named, and the first product keeps its stock.
    const short = await failure(
      take(
        [
          { productId: a.id, quantity: 2 },
          { productId: b.id, quantity: 3 },
          { productId: untracked.id, quantity: 100 }
        ],
        instant(50_000)
      )
    )
    expect(short).toEqual(new InsufficientStock({ sku: b.sku, available: 1, requested: 3 }))
    expect(await find(a.id)).toEqual(a)
    expect(await find(b.id)).toEqual(b)

    // Repeated lines of one product count together against its stock.
    const repeated = await failure(
      take(
        [
          { productId: a.id, quantity: 3 },
          { productId: a.id, quantity: 3 }
        ],
        instant(50_001)
      )
    )
    expect(repeated).toEqual(new InsufficientStock({ sku: a.sku, available: 5, requested: 6 }))
    expect(await find(a.id)).toEqual(a)

    const now = instant(60_000)
    await run(
      take(
        [
          { productId: b.id, quantity: 1 },
          { productId: a.id, quantity: 2 },
          { productId: untracked.id, quantity: 100 },
          { productId: a.id, quantity: 1 },
          { productId: "prod_missing", quantity: 1 }
        ],
        now
      )
    )
    expect(await find(a.id)).toEqual({ ...a, stock: 2, version: 2, updated_at: now })
    expect(await find(b.id)).toEqual({ ...b, stock: 0, version: 2, updated_at: now })
    expect(await find(untracked.id)).toEqual(untracked)
    await run(take([], now))

    // Given back: to tracked products still there, each once however many lines name it.
    const later = instant(70_000)
    await products((repo) =>
      repo.returnStock(
        account,
        [
          { productId: a.id, quantity: 2 },
          { productId: untracked.id, quantity: 4 },
          { productId: a.id, quantity: 1 },
          { productId: b.id, quantity: 1 },
          { productId: "prod_missing", quantity: 1 }
        ],
        later
      )
    )
    expect(await find(a.id)).toEqual({ ...a, stock: 5, version: 3, updated_at: later })
    expect(await find(b.id)).toEqual({ ...b, stock: 1, version: 3, updated_at: later })
    expect(await find(untracked.id)).toEqual(untracked)
  })

  it("lets exactly as many concurrent transactions take a unit as there are units", async () => {
    const account = await makeAccount()
    const scarce = product({ stock: 5 })
    await products((repo) => repo.insert(account, scarce))
    const now = instant(80_000)
    // On a server each transaction keeps its lock a moment, so the others really wait on it.
    const hold = database.kind === "postgres" ? "SELECT pg_sleep(0.01)" : "SELECT 1"
    const outcomes = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* CatalogueRepo
        return yield* Effect.forEach(
          Array.from({ length: 20 }),
          () =>
            sql
              .withTransaction(
                Effect.andThen(repo.takeStock(account, [{ productId: scarce.id, quantity: 1 }], now), sql.unsafe(hold))
              )
              .pipe(
                Effect.match({
                  onSuccess: () => "taken" as const,
                  onFailure: (error) => error
                })
              ),
          { concurrency: "unbounded" }
        )
      })
    )
    expect(outcomes.filter((outcome) => outcome === "taken")).toHaveLength(5)
    const refused = outcomes.filter((outcome) => outcome !== "taken")
    expect(refused).toHaveLength(15)
    for (const error of refused) {
      expect(error).toEqual(new InsufficientStock({ sku: scarce.sku, available: 0, requested: 1 }))
    }
    expect(await products((repo) => repo.find(account, scarce.id))).toEqual({
      ...scarce,
      stock: 0,
      version: 6,
      updated_at: now
    })
  })

  it("moves the stock of several products concurrently, whatever order the lines come in, without deadlock", async () => {
    const account = await makeAccount()
    const [a, b, c] = [product({ stock: 100 }), product({ stock: 100 }), product({ stock: 100 })]
    for (const p of [a, b, c]) await products((repo) => repo.insert(account, p))
    const now = instant(90_000)
    const lineSets = [
      [a, b, c],
      [c, b, a],
      [b, a],
      [c, a]
    ]
    await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* CatalogueRepo
        yield* Effect.forEach(
          Array.from({ length: 24 }, (_, i) => i),
          (i) => {
            const moves = lineSets[i % lineSets.length]!.map((p) => ({ productId: p.id, quantity: 2 }))
            // Every third transaction gives back what the one before took.
            const move = i % 3 === 2 ? repo.returnStock(account, moves, now) : repo.takeStock(account, moves, now)
            return sql.withTransaction(move)
          },
          { concurrency: "unbounded" }
        )
      })
    )
    // 16 transactions took 2 of each product of their lines, 8 gave 2 back.
    const expected = new Map([a, b, c].map((p) => [p.id, 100]))
    for (let i = 0; i < 24; i++) {
      for (const p of lineSets[i % lineSets.length]!) expected.set(p.id, expected.get(p.id)! + (i % 3 === 2 ? 2 : -2))
    }
    for (const p of [a, b, c]) {
      const stored = await products((repo) => repo.find(account, p.id))
      expect(stored?.stock).toBe(expected.get(p.id))
    }
  })

  it("takes every unit in units of work, from a connection's stripe while it has enough and asking once it runs dry", async () => {
    // 20 units over 16 stripes (one or two each): most takes find their stripe short after a
    // unit or two, break `stock >= 0`, and run again asking, which spreads what is left again.
    const account = await makeAccount()
    const scarce = product({ stock: 20 })
    await products((repo) => repo.insert(account, scarce))
    const now = instant(85_000)
    const outcomes = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* CatalogueRepo
        return yield* Effect.forEach(
          Array.from({ length: 30 }),
          () =>
            UnitOfWork.withUnit(sql, repo.takeStock(account, [{ productId: scarce.id, quantity: 1 }], now)).pipe(
              Effect.match({ onSuccess: () => "taken" as const, onFailure: (error) => error })
            ),
          { concurrency: 8 }
        )
      })
    )
    expect(outcomes.filter((outcome) => outcome === "taken")).toHaveLength(20)
    for (const error of outcomes.filter((outcome) => outcome !== "taken")) {
      expect(error).toEqual(new InsufficientStock({ sku: scarce.sku, available: 0, requested: 1 }))
    }
    // One version per order that took stock, as with one row.
    expect(await products((repo) => repo.find(account, scarce.id))).toEqual({
      ...scarce,
      stock: 0,
      version: 21,
      updated_at: now
    })
  })

  if (database.kind === "postgres") {
    it("lets orders for one product take stock while another order for it holds its transaction open", async () => {
      const account = await makeAccount()
      const hot = product({ stock: 1_000 })
      await products((repo) => repo.insert(account, hot))
      const now = instant(88_000)
      const stripe = Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ stripe: number }>`SELECT pg_backend_pid() % ${SqlCatalogue.STRIPES} AS stripe`.pipe(
          Effect.map(([row]) => Number(row!.stripe))
        )
      )
      const held = await run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const repo = yield* CatalogueRepo
          const take = repo.takeStock(account, [{ productId: hot.id, quantity: 1 }], now)
          const taken = yield* Deferred.make<number>()
          const release = yield* Deferred.make<void>()
          // The first order takes its unit (the statement after the take sends it) and keeps its transaction open.
          const first = yield* Effect.forkChild(
            UnitOfWork.withUnit(
              sql,
              Effect.gen(function* () {
                yield* take
                yield* Deferred.succeed(taken, yield* stripe)
                yield* Deferred.await(release)
              })
            )
          )
          const heldStripe = yield* Deferred.await(taken)
          // Others, each on its own connection, may wait 1 s for a lock at most.
          const others = yield* Effect.forEach(
            Array.from({ length: 4 }),
            () =>
              UnitOfWork.withUnit(
                sql,
                Effect.gen(function* () {
                  yield* sql`SET LOCAL lock_timeout = '1s'`
                  const own = yield* stripe
                  yield* take
                  return own
                })
              ).pipe(Effect.exit),
            { concurrency: "unbounded" }
          )
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(first)
          return { heldStripe, others }
        })
      )
      const elsewhere = held.others.filter((exit) => Exit.isSuccess(exit) && exit.value !== held.heldStripe)
      // Four connections all on the held stripe would be a 1 in 65,536 draw; with one row every order waited.
      expect(elsewhere.length).toBeGreaterThan(0)
      const stored = await products((repo) => repo.find(account, hot.id))
      const took = 1 + held.others.filter(Exit.isSuccess).length
      expect([stored?.stock, stored?.version]).toEqual([1_000 - took, 1 + took])
    })
  }

  it("stores an order as given and replaces its mutable fields on update", async () => {
    const account = await makeAccount()
    const placed = order({ note: "Leave at the door", lead_id: "ld_round_trip" })
    await orders((repo) => repo.insert(account, placed))
    const found = await orders((repo) => repo.find(account, placed.id))
    expect(found).toEqual(placed)
    // The lines come back with their fields in the schema's order.
    expect(Object.keys(found!.items[0]!)).toEqual(Object.keys(placed.items[0]!))
    const stranger = await makeAccount()
    expect(await orders((repo) => repo.find(stranger, placed.id))).toBeUndefined()

    const updated: Order = {
      ...placed,
      status: "shipped",
      payment_status: "paid",
      note: null,
      tracking: { carrier: "DHL", number: "JD0001", url: null },
      metadata: { shipped_by: "warehouse 2" },
      version: 3,
      updated_at: instant(100_002),
      confirmed_at: instant(100_001),
      shipped_at: instant(100_002),
      paid_at: instant(100_001)
    }
    await orders((repo) => repo.update(account, updated))
    const locked = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(Effect.flatMap(OrdersRepo, (repo) => repo.findForUpdate(account, placed.id)))
      )
    )
    expect(locked).toEqual(updated)
    expect(Object.keys(locked!.tracking!)).toEqual(["carrier", "number", "url"])

    const cancelled: Order = {
      ...updated,
      status: "cancelled",
      payment_status: "refunded",
      tracking: null,
      version: 4,
      updated_at: instant(100_003),
      cancelled_at: instant(100_003),
      refunded_at: instant(100_003)
    }
    await orders((repo) => repo.update(account, cancelled))
    expect(await orders((repo) => repo.find(account, placed.id))).toEqual(cancelled)
    expect(await orders((repo) => repo.findForUpdate(account, "ord_missing"))).toBeUndefined()
  })

  it("lets a WhatsApp message place one order per account", async () => {
    const [account, other] = [await makeAccount(), await makeAccount()]
    const fromChat = order({ source: "whatsapp", whatsapp_message_id: "wamid.ABC" })
    await orders((repo) => repo.insert(account, fromChat))
    const again = await failure(
      Effect.flatMap(OrdersRepo, (repo) =>
        repo.insert(account, order({ source: "whatsapp", whatsapp_message_id: "wamid.ABC" }))
      )
    )
    expect(again).toEqual(new Conflict({ message: "This WhatsApp message placed an order already" }))
    const elsewhere = order({ source: "whatsapp", whatsapp_message_id: "wamid.ABC" })
    await orders((repo) => repo.insert(other, elsewhere))
    // Orders from the API have no wamid, and any number of them may be placed.
    await orders((repo) => repo.insert(account, order()))
    await orders((repo) => repo.insert(account, order()))

    expect(await orders((repo) => repo.findByWhatsAppMessage(account, "wamid.ABC"))).toEqual(fromChat)
    expect(await orders((repo) => repo.findByWhatsAppMessage(other, "wamid.ABC"))).toEqual(elsewhere)
    expect(await orders((repo) => repo.findByWhatsAppMessage(account, "wamid.NONE"))).toBeUndefined()
    expect((await orders((repo) => repo.list(account, {}, { limit: 50, offset: 0 }))).total).toBe(3)
  })

  it("lists orders newest first by status, payment, lead and creation time", async () => {
    const account = await makeAccount()
    const o1 = order({ lead_id: "ld_a" })
    const o2 = order({ lead_id: "ld_b", status: "confirmed", confirmed_at: instant(200_000) })
    const o3 = order({ lead_id: "ld_a", status: "confirmed", payment_status: "paid" })
    const o4 = order({ lead_id: "ld_a", status: "cancelled", payment_status: "refunded" })
    for (const o of [o1, o2, o3, o4]) await orders((repo) => repo.insert(account, o))
    const stranger = await makeAccount()
    await orders((repo) => repo.insert(stranger, order({ lead_id: "ld_a" })))
    const list = (filter: Parameters<OrdersRepo["Service"]["list"]>[1], limit = 50, offset = 0) =>
      orders((repo) => repo.list(account, filter, { limit, offset }))

    expect(await list({})).toEqual({ items: [o4, o3, o2, o1], total: 4 })
    expect(await list({}, 2, 1)).toEqual({ items: [o3, o2], total: 4 })
    expect(await list({ status: "confirmed" })).toEqual({ items: [o3, o2], total: 2 })
    expect(await list({ payment_status: "unpaid" })).toEqual({ items: [o2, o1], total: 2 })
    expect(await list({ lead_id: "ld_a" })).toEqual({ items: [o4, o3, o1], total: 3 })
    expect(await list({ lead_id: "ld_a", status: "confirmed", payment_status: "paid" })).toEqual({
      items: [o3],
      total: 1
    })
    // created_after is inclusive, created_before exclusive.
    expect(await list({ created_after: o2.created_at })).toEqual({ items: [o4, o3, o2], total: 3 })
    expect(await list({ created_before: o2.created_at })).toEqual({ items: [o1], total: 1 })
    expect(await list({ created_after: o2.created_at, created_before: o4.created_at })).toEqual({
      items: [o3, o2],
      total: 2
    })
    expect(await list({ lead_id: "ld_none" })).toEqual({ items: [], total: 0 })
  })
})

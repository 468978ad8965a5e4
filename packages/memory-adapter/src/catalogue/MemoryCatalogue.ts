import { Effect, Layer } from "effect"
import { type ProductFilter, type Product, matches, skuTakenMessage } from "@leadline/core/catalogue/Product"
import { merged, CatalogueRepo, type StockMove } from "@leadline/core/catalogue/CatalogueRepo"
import { Conflict, InsufficientStock } from "@leadline/core/Errors"
import * as MemoryLocks from "../MemoryLocks.ts"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly product: Product
}

const unfiltered = (filter: ProductFilter) => Object.values(filter).every((value) => value === undefined)

/**
 * Products by account: a SKU is unique in its account, pages are newest first, and stock
 * moves lock their rows (`MemoryLocks`) so concurrent orders never take the same unit twice.
 */
export const layer = Layer.sync(CatalogueRepo)(() => {
  const products = MemoryTable.make({
    primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.product.id),
    unique: { sku: (row) => MemoryTable.key(row.accountId, row.product.sku) },
    indexes: { account: (row) => row.accountId },
    order: MemoryTable.newestFirst(
      (row: Row) => row.product.created_at,
      (row) => row.product.id
    )
  })
  const locks = MemoryLocks.make()
  const find = (accountId: string, id: string) => products.get(MemoryTable.key(accountId, id))?.product
  const skuTaken = (product: Product) => Effect.fail(new Conflict({ message: skuTakenMessage(product.sku) }))

  /**
   * The merged moves of tracked products, their rows locked in id order. As SQL's
   * `FOR UPDATE ... WHERE stock IS NOT NULL`, a product is picked before the wait and
   * checked again after it (`tracked`): one that stopped being tracked or went meanwhile is skipped.
   */
  const lockTracked = (accountId: string, moves: ReadonlyArray<StockMove>) =>
    Effect.gen(function* () {
      const picked = merged(moves).filter((move) => find(accountId, move.productId)?.stock != null)
      yield* locks.lockAll(picked.map((move) => MemoryTable.key(accountId, move.productId)))
      return picked
    })
  const tracked = (accountId: string, move: StockMove) => {
    const product = find(accountId, move.productId)
    return product === undefined || product.stock === null ? undefined : { product, stock: product.stock }
  }

  return CatalogueRepo.of({
    insert: (accountId, product) =>
      Effect.flatMap(
        atomically((tx) => products.insert(tx, { accountId, product })),
        (violation) => (violation === undefined ? Effect.void : skuTaken(product))
      ),
    list: (accountId, filter, page) =>
      Effect.sync(() => {
        const slice = products.page(
          "account",
          accountId,
          page,
          unfiltered(filter) ? undefined : (row) => matches(filter, row.product)
        )
        return { items: slice.items.map((row) => row.product), total: slice.total }
      }),
    find: (accountId, id) => Effect.sync(() => find(accountId, id)),
    findForUpdate: (accountId, id) =>
      Effect.andThen(
        locks.lock(MemoryTable.key(accountId, id)),
        Effect.sync(() => find(accountId, id))
      ),
    findMany: (accountId, keys) =>
      Effect.sync(() => {
        const found = new Map<string, Product>()
        for (const id of keys.ids) {
          const product = find(accountId, id)
          if (product !== undefined) found.set(product.id, product)
        }
        for (const sku of keys.skus) {
          const product = products.find("sku", MemoryTable.key(accountId, sku))?.product
          if (product !== undefined) found.set(product.id, product)
        }
        return [...found.values()]
      }),
    update: (accountId, product) =>
      Effect.flatMap(
        atomically((tx) => products.update(tx, { accountId, product })),
        (before) =>
          before instanceof MemoryTable.Violation
            ? skuTaken(product)
            : Effect.succeed(before === undefined ? undefined : product)
      ),
    remove: (accountId, id) => atomically((tx) => products.remove(tx, MemoryTable.key(accountId, id))?.product),
    takeStock: (accountId, moves, now) =>
      Effect.gen(function* () {
        const picked = yield* lockTracked(accountId, moves)
        // The check and the writes in one step: a short product leaves every row as it was.
        const short = yield* atomically((tx) => {
          const taking = picked.flatMap((move) => {
            const row = tracked(accountId, move)
            return row === undefined ? [] : [{ ...row, quantity: move.quantity }]
          })
          const first = taking.find(({ stock, quantity }) => stock < quantity)
          if (first !== undefined) {
            return new InsufficientStock({ sku: first.product.sku, available: first.stock, requested: first.quantity })
          }
          for (const { product, stock, quantity } of taking) {
            products.update(tx, {
              accountId,
              product: { ...product, stock: stock - quantity, version: product.version + 1, updated_at: now }
            })
          }
          return undefined
        })
        if (short !== undefined) return yield* short
      }),
    returnStock: (accountId, moves, now) =>
      Effect.gen(function* () {
        const picked = yield* lockTracked(accountId, moves)
        yield* atomically((tx) => {
          for (const move of picked) {
            const row = tracked(accountId, move)
            if (row === undefined) continue
            products.update(tx, {
              accountId,
              product: {
                ...row.product,
                stock: row.stock + move.quantity,
                version: row.product.version + 1,
                updated_at: now
              }
            })
          }
        })
      })
  })
})

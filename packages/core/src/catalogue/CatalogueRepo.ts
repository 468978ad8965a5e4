import { Context, type Effect } from "effect"
import type { Conflict, InsufficientStock } from "../Errors.ts"
import type { Listed, Page } from "../Pagination.ts"
import type { Product, ProductFilter } from "./Product.ts"

/** Units of one product an order takes or gives back. */
export interface StockMove {
  readonly productId: string
  readonly quantity: number
}

/** Product storage, scoped to one account; a SKU is unique in its account. */
export class CatalogueRepo extends Context.Service<
  CatalogueRepo,
  {
    readonly insert: (accountId: string, product: Product) => Effect.Effect<void, Conflict>
    /** Newest first (`created_at` desc, then `id` desc). */
    readonly list: (accountId: string, filter: ProductFilter, page: Page) => Effect.Effect<Listed<Product>>
    readonly find: (accountId: string, id: string) => Effect.Effect<Product | undefined>
    /** The product, locked for the caller's transaction where the store can lock (a PATCH's read). */
    readonly findForUpdate: (accountId: string, id: string) => Effect.Effect<Product | undefined>
    /** The products of the account with one of these ids or SKUs (an order's lines), unlocked. */
    readonly findMany: (
      accountId: string,
      keys: { readonly ids: ReadonlyArray<string>; readonly skus: ReadonlyArray<string> }
    ) => Effect.Effect<ReadonlyArray<Product>>
    /** Replaces the stored product; undefined when it is not in the account. */
    readonly update: (accountId: string, product: Product) => Effect.Effect<Product | undefined, Conflict>
    /** Deletes the product and returns it as it was; undefined when it is not in the account. */
    readonly remove: (accountId: string, id: string) => Effect.Effect<Product | undefined>
    /**
     * Takes the units of tracked products (stock not null), all or none: the rows are locked
     * in id order, so two orders of the same products never deadlock, and a product without
     * enough fails with the first such line and takes nothing. Untracked products are not
     * touched. Each product taken from gets version + 1 and `updated_at` = `now`.
     */
    readonly takeStock: (
      accountId: string,
      moves: ReadonlyArray<StockMove>,
      now: string
    ) => Effect.Effect<void, InsufficientStock>
    /** Gives units back to tracked products still in the catalogue (a cancelled order). */
    readonly returnStock: (accountId: string, moves: ReadonlyArray<StockMove>, now: string) => Effect.Effect<void>
  }
>()("core/CatalogueRepo") {}

/** Moves of the same product merged into one, in product id order (the lock order). */
export const merged = (moves: ReadonlyArray<StockMove>): ReadonlyArray<StockMove> => {
  const byProduct = new Map<string, number>()
  for (const move of moves) byProduct.set(move.productId, (byProduct.get(move.productId) ?? 0) + move.quantity)
  return [...byProduct.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([productId, quantity]) => ({ productId, quantity }))
}

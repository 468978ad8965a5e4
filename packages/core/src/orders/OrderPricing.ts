import { Effect } from "effect"
import type { Product } from "../catalogue/Product.ts"
import type { StockMove } from "../catalogue/CatalogueRepo.ts"
import { invalidField, type InvalidInput } from "../Errors.ts"
import { MAX_AMOUNT } from "../money/Money.ts"
import type { CreateOrder, OrderItem } from "./Order.ts"

/** An order's lines and amounts as the server computes them; the client never sets a product line's price. */
export interface Priced {
  readonly currency: string
  readonly items: ReadonlyArray<Omit<OrderItem, "id">>
  readonly amount_subtotal: number
  readonly amount_shipping: number
  readonly amount_discount: number
  readonly amount_total: number
  /** What the order takes from each product tracked when read (the lock and stock check are the store's). */
  readonly moves: ReadonlyArray<StockMove>
}

type Input = Pick<CreateOrder, "items" | "currency" | "amount_shipping" | "amount_discount">

/**
 * Prices an order from the account's products (docs/contract-commerce-ai.md §3): product lines copy the
 * product's name, SKU and price (the snapshot), custom lines keep theirs; amounts are exact
 * integers of the currency's minor unit. A line naming no product of the account, an inactive
 * product, a currency mismatch or a negative total is a 400 naming its path.
 */
export const price = (input: Input, products: ReadonlyArray<Product>): Effect.Effect<Priced, InvalidInput> =>
  Effect.suspend(() => {
    const byId = new Map(products.map((product) => [product.id, product]))
    const bySku = new Map(products.map((product) => [product.sku, product]))
    const firstProduct = input.items.find((line) => line.product_id !== undefined || line.sku !== undefined)
    const currency =
      input.currency ??
      (firstProduct === undefined
        ? undefined
        : (firstProduct.product_id !== undefined ? byId : bySku).get((firstProduct.product_id ?? firstProduct.sku)!)
            ?.currency)
    const items: Array<Omit<OrderItem, "id">> = []
    const moves: Array<StockMove> = []
    for (const [i, line] of input.items.entries()) {
      if (line.product_id === undefined && line.sku === undefined) {
        items.push({
          product_id: null,
          sku: null,
          name: line.name!,
          unit_amount: line.unit_amount!,
          quantity: line.quantity,
          amount_total: line.unit_amount! * line.quantity
        })
        continue
      }
      const path = line.product_id !== undefined ? `items.${i}.product_id` : `items.${i}.sku`
      const product = line.product_id !== undefined ? byId.get(line.product_id) : bySku.get(line.sku!)
      if (product === undefined) return Effect.fail(invalidField(path, "no such product in this account"))
      if (!product.active) return Effect.fail(invalidField(path, "the product is not active"))
      if (currency !== undefined && product.currency !== currency) {
        return Effect.fail(invalidField(path, `the product is priced in ${product.currency}, the order in ${currency}`))
      }
      items.push({
        product_id: product.id,
        sku: product.sku,
        name: product.name,
        unit_amount: product.unit_amount,
        quantity: line.quantity,
        amount_total: product.unit_amount * line.quantity
      })
      // Only a product tracked as read takes stock: one that starts being tracked after the read is
      // ordered as if just before, and an order of untracked products locks and writes no product.
      if (product.stock !== null) moves.push({ productId: product.id, quantity: line.quantity })
    }
    if (currency === undefined) {
      return Effect.fail(invalidField("currency", "is required when every line is a custom line"))
    }
    const subtotal = items.reduce((sum, item) => sum + item.amount_total, 0)
    const shipping = input.amount_shipping ?? 0
    const discount = input.amount_discount ?? 0
    const total = subtotal + shipping - discount
    if (total < 0) return Effect.fail(invalidField("amount_discount", "must not be more than the lines and shipping"))
    if (subtotal > MAX_AMOUNT || total > MAX_AMOUNT) {
      return Effect.fail(invalidField("items", `the order's amounts must stay within ${MAX_AMOUNT}`))
    }
    return Effect.succeed({
      currency,
      items,
      amount_subtotal: subtotal,
      amount_shipping: shipping,
      amount_discount: discount,
      amount_total: total,
      moves
    })
  })

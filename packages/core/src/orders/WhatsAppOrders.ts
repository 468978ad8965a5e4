import { Context, Effect, Layer } from "effect"
import type { CurrentPrincipal } from "../auth/Principal.ts"
import type { Product } from "../catalogue/Product.ts"
import { CatalogueRepo } from "../catalogue/CatalogueRepo.ts"
import { fromDecimal, isCurrency } from "../money/Money.ts"
import { type CreateOrder, MAX_ITEMS, MAX_QUANTITY, type OrderItemInput } from "./Order.ts"
import { Orders } from "./Orders.ts"
import { OrdersRepo } from "./OrdersRepo.ts"

/** An inbound WhatsApp message of type `order`, newly stored: its wamid, its sender's lead, the item as received. */
export interface OrderMessage {
  readonly wamid: string
  readonly leadId: string
  readonly payload: unknown
}

/** One `product_items[]` entry as Meta sends it. */
export interface WhatsAppItem {
  readonly retailerId: string
  readonly quantity: number
  readonly price: number
  readonly currency: string
}

type Json = Record<string, unknown>
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)
const numberOf = (u: unknown): number => (typeof u === "number" ? u : typeof u === "string" ? Number(u) : Number.NaN)

/** The items of a message's `order` (Meta sends `quantity` and `item_price` as numbers, sometimes as strings); bad ones are left out. */
export const itemsOf = (payload: unknown): { items: ReadonlyArray<WhatsAppItem>; text: string | null } => {
  const order = isObject(payload) ? payload.order : undefined
  if (!isObject(order)) return { items: [], text: null }
  const items = (Array.isArray(order.product_items) ? order.product_items : []).flatMap((raw): Array<WhatsAppItem> => {
    if (!isObject(raw) || typeof raw.product_retailer_id !== "string" || typeof raw.currency !== "string") return []
    const quantity = numberOf(raw.quantity)
    const price = numberOf(raw.item_price)
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > MAX_QUANTITY) return []
    if (!Number.isFinite(price) || price < 0 || !isCurrency(raw.currency.toUpperCase())) return []
    return [{ retailerId: raw.product_retailer_id, quantity, price, currency: raw.currency.toUpperCase() }]
  })
  return { items: items.slice(0, MAX_ITEMS), text: typeof order.text === "string" ? order.text.slice(0, 2000) : null }
}

/**
 * The lines of a WhatsApp order (docs/contract-commerce-ai.md §3, "WhatsApp mapping"): an item whose
 * retailer id is the SKU of an active product priced in the order's currency is a product line
 * (the catalogue's price, as for any order); any other item, and one whose product ran out
 * (`unstocked`), is a custom line at the price the customer saw in WhatsApp.
 */
export const linesOf = (
  items: ReadonlyArray<WhatsAppItem>,
  currency: string,
  products: ReadonlyArray<Product>,
  unstocked: ReadonlySet<string>
): ReadonlyArray<OrderItemInput> => {
  const bySku = new Map(products.map((product) => [product.sku, product]))
  return items.map((item) => {
    const product = bySku.get(item.retailerId)
    if (product?.active && product.currency === currency && !unstocked.has(product.sku)) {
      return { sku: product.sku, quantity: item.quantity }
    }
    return {
      name: (product?.name ?? item.retailerId).slice(0, 200) || "WhatsApp item",
      unit_amount: fromDecimal(item.price, currency) ?? 0,
      quantity: item.quantity
    }
  })
}

/**
 * Orders placed in WhatsApp: one order per `order` message, for the lead who sent it, made as
 * any order is (`Orders.create`, `order.created`) with `source: whatsapp`. The message is the
 * customer's word: a product without enough stock does not refuse it, its items become custom
 * lines (no stock taken, so none is given back on cancel) and the order's metadata names them.
 */
export class WhatsAppOrders extends Context.Service<
  WhatsAppOrders,
  {
    /** Places the orders of newly stored messages; how many it placed. A message that placed one already places none. */
    readonly place: (
      accountId: string,
      messages: ReadonlyArray<OrderMessage>
    ) => Effect.Effect<number, never, CurrentPrincipal>
  }
>()("core/WhatsAppOrders") {
  static readonly layer: Layer.Layer<WhatsAppOrders, never, Orders | CatalogueRepo | OrdersRepo> = Layer.effect(
    WhatsAppOrders,
    Effect.gen(function* () {
      const orders = yield* Orders
      const products = yield* CatalogueRepo
      const repo = yield* OrdersRepo

      const placeOne = Effect.fnUntraced(function* (accountId: string, message: OrderMessage) {
        if ((yield* repo.findByWhatsAppMessage(accountId, message.wamid)) !== undefined) return false
        const { items, text } = itemsOf(message.payload)
        const currency = items[0]?.currency
        if (currency === undefined) {
          yield* Effect.logWarning(`WhatsApp order ${message.wamid} has no usable items; no order placed`)
          return false
        }
        const inCurrency = items.filter((item) => item.currency === currency)
        const known = yield* products.findMany(accountId, { ids: [], skus: inCurrency.map((item) => item.retailerId) })
        // A product with too little stock makes its items custom lines up front: the order is placed once.
        const asked = new Map<string, number>()
        for (const item of inCurrency) asked.set(item.retailerId, (asked.get(item.retailerId) ?? 0) + item.quantity)
        const unstocked = new Set(
          known
            .filter((product) => product.stock !== null && product.stock < (asked.get(product.sku) ?? 0))
            .map((product) => product.sku)
        )
        const input: CreateOrder = {
          lead_id: message.leadId,
          items: linesOf(inCurrency, currency, known, unstocked),
          currency,
          note: text,
          metadata: unstocked.size === 0 ? {} : { whatsapp_unstocked_skus: [...unstocked] }
        }
        return yield* orders.create(input, { source: "whatsapp", wamid: message.wamid }).pipe(
          Effect.as(true),
          // Stock taken by another order since it was read: the webhook fails and rolls back, and Meta's
          // retry places the cart with what is left then. Anything else refuses before writing: logged, kept.
          Effect.catchTag("InsufficientStock", (short) => Effect.die(short)),
          Effect.catch((error) =>
            Effect.as(
              Effect.logWarning(`WhatsApp order ${message.wamid} could not be placed: ${JSON.stringify(error)}`),
              false
            )
          )
        )
      })

      const place = Effect.fnUntraced(function* (accountId: string, messages: ReadonlyArray<OrderMessage>) {
        let placed = 0
        for (const message of messages) if (yield* placeOne(accountId, message)) placed++
        return placed
      })

      return WhatsAppOrders.of({ place })
    })
  )
}

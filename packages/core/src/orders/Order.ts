import { Schema } from "effect"
import { Sku } from "../catalogue/Product.ts"
import { Amount, Currency } from "../money/Money.ts"
import { JsonObject, Text } from "../Text.ts"

/** docs/contract-commerce-ai.md §3: fulfilment and payment are two machines (`OrderState.ts`). */
export const OrderStatus = Schema.Literals(["pending", "confirmed", "shipped", "delivered", "cancelled"]).annotate({
  identifier: "OrderStatus"
})
export type OrderStatus = typeof OrderStatus.Type

export const PaymentStatus = Schema.Literals(["unpaid", "paid", "refunded"]).annotate({ identifier: "PaymentStatus" })
export type PaymentStatus = typeof PaymentStatus.Type

export const OrderItem = Schema.Struct({
  id: Schema.String.annotate({ description: "`li_` followed by a sortable id" }),
  product_id: Schema.NullOr(Schema.String).annotate({ description: "null on a custom line" }),
  sku: Schema.NullOr(Schema.String),
  name: Schema.String,
  unit_amount: Schema.Number.annotate({
    description: "Copied from the product when the order was made: a later price change leaves it"
  }),
  quantity: Schema.Number,
  amount_total: Schema.Number.annotate({ description: "unit_amount × quantity" })
}).annotate({ identifier: "OrderItem" })
export type OrderItem = typeof OrderItem.Type

export const Tracking = Schema.Struct({
  carrier: Schema.NullOr(Schema.String),
  number: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String)
}).annotate({ identifier: "OrderTracking" })

export const OrderSource = Schema.Literals(["api", "whatsapp"])

export const Order = Schema.Struct({
  id: Schema.String.annotate({ description: "`ord_` followed by a sortable id" }),
  lead_id: Schema.String,
  status: OrderStatus,
  payment_status: PaymentStatus,
  currency: Schema.String.annotate({ description: "ISO 4217, upper-case" }),
  items: Schema.Array(OrderItem),
  amount_subtotal: Schema.Number.annotate({ description: "The sum of the lines' amount_total" }),
  amount_shipping: Schema.Number,
  amount_discount: Schema.Number,
  amount_total: Schema.Number.annotate({ description: "subtotal + shipping − discount" }),
  note: Schema.NullOr(Schema.String),
  tracking: Schema.NullOr(Tracking),
  source: OrderSource,
  whatsapp_message_id: Schema.NullOr(Schema.String).annotate({
    description: "The WhatsApp message (wamid) that placed it, for `source: whatsapp`"
  }),
  metadata: Schema.Record(Schema.String, Schema.Unknown),
  version: Schema.Number.annotate({ description: 'Starts at 1, +1 on every change; the ETag is `"<version>"`' }),
  created_at: Schema.String,
  updated_at: Schema.String,
  confirmed_at: Schema.NullOr(Schema.String),
  shipped_at: Schema.NullOr(Schema.String),
  delivered_at: Schema.NullOr(Schema.String),
  cancelled_at: Schema.NullOr(Schema.String),
  paid_at: Schema.NullOr(Schema.String),
  refunded_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Order" })
export type Order = typeof Order.Type

export const MAX_ITEMS = 100
export const MAX_QUANTITY = 10_000

const Quantity = Schema.Number.check(
  Schema.makeFilter(
    (n: number) =>
      (Number.isInteger(n) && n >= 1 && n <= MAX_QUANTITY) || `quantity must be an integer from 1 to ${MAX_QUANTITY}`
  )
)

const LineName = Text.check(
  Schema.isMinLength(1, { message: "name must not be empty" }),
  Schema.isMaxLength(200, { message: "name must be at most 200 characters" })
)

/**
 * A product line names its product (`product_id` or `sku`) and takes its name and price from it;
 * a custom line has `name` and `unit_amount` and no product. One of the two, never a mix: a
 * product line's price cannot be set by the caller.
 */
export const OrderItemInput = Schema.Struct({
  product_id: Schema.optional(Text),
  sku: Schema.optional(Sku),
  name: Schema.optional(LineName),
  unit_amount: Schema.optional(Amount),
  quantity: Quantity
})
  .check(
    Schema.makeFilter((line) => {
      const product = line.product_id !== undefined || line.sku !== undefined
      const custom = line.name !== undefined || line.unit_amount !== undefined
      if (product && custom) {
        return "a product line (product_id or sku) takes its name and unit_amount from the product: leave them out"
      }
      if (line.product_id !== undefined && line.sku !== undefined)
        return "name the product by product_id or by sku, not both"
      if (!product && (line.name === undefined || line.unit_amount === undefined)) {
        return "a line needs product_id or sku, or name and unit_amount for a custom line"
      }
      return true
    })
  )
  .annotate({ identifier: "OrderItemInput" })
export type OrderItemInput = typeof OrderItemInput.Type

const Note = Text.check(Schema.isMaxLength(2000, { message: "note must be at most 2000 characters" }))

const TrackingText = Text.check(Schema.isMaxLength(500, { message: "must be at most 500 characters" }))
const TrackingInput = Schema.Struct({
  carrier: Schema.optional(Schema.NullOr(TrackingText)),
  number: Schema.optional(Schema.NullOr(TrackingText)),
  url: Schema.optional(Schema.NullOr(TrackingText))
}).annotate({ identifier: "OrderTrackingInput" })

export const CreateOrder = Schema.Struct({
  lead_id: Text,
  items: Schema.Array(OrderItemInput).check(
    Schema.isMinLength(1, { message: "an order needs at least one line" }),
    Schema.isMaxLength(MAX_ITEMS, { message: `an order has at most ${MAX_ITEMS} lines` })
  ),
  currency: Schema.optional(Currency).annotate({
    description: "Required with a custom line; otherwise taken from the products"
  }),
  amount_shipping: Schema.optional(Amount),
  amount_discount: Schema.optional(Amount),
  note: Schema.optional(Schema.NullOr(Note)),
  metadata: Schema.optional(JsonObject("metadata"))
}).annotate({ identifier: "CreateOrder" })
export type CreateOrder = typeof CreateOrder.Type

export const UpdateOrder = Schema.Struct({
  status: Schema.optional(OrderStatus),
  payment_status: Schema.optional(PaymentStatus),
  note: Schema.optional(Schema.NullOr(Note)),
  tracking: Schema.optional(Schema.NullOr(TrackingInput)),
  metadata: Schema.optional(JsonObject("metadata"))
}).annotate({ identifier: "UpdateOrder" })
export type UpdateOrder = typeof UpdateOrder.Type

/** The list's filters; `created_after` and `created_before` are instants, inclusive and exclusive. */
export interface OrderFilter {
  readonly status?: OrderStatus | undefined
  readonly payment_status?: PaymentStatus | undefined
  readonly lead_id?: string | undefined
  readonly created_after?: string | undefined
  readonly created_before?: string | undefined
}

export const matches = (filter: OrderFilter, order: Order): boolean =>
  (filter.status === undefined || order.status === filter.status) &&
  (filter.payment_status === undefined || order.payment_status === filter.payment_status) &&
  (filter.lead_id === undefined || order.lead_id === filter.lead_id) &&
  (filter.created_after === undefined || order.created_at >= filter.created_after) &&
  (filter.created_before === undefined || order.created_at < filter.created_before)

import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { CreateOrder, Order, OrderStatus, PaymentStatus, UpdateOrder } from "@leadline/core/orders/Order"
import { Meta, PageQueryFields } from "@leadline/core/Pagination"
import { Id, Text } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { IfMatchHeaders } from "../Preconditions.ts"
import { RequestErrors } from "../RequestErrors.ts"
import {
  Conflict,
  Forbidden,
  InsufficientStock,
  InvalidTransition,
  NotFound,
  PreconditionFailed,
  ValidationError
} from "../WireErrors.ts"

export const OrderList = Schema.Struct({ orders: Schema.Array(Order), meta: Meta }).annotate({
  identifier: "OrderList"
})

const OrderId = { id: Id.annotate({ description: "An order id, `ord_…`" }) }
const ETAG = 'Answers with `ETag: "<version>"`.'

export class OrdersApi extends HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: {
        ...PageQueryFields,
        status: Schema.optional(OrderStatus),
        payment_status: Schema.optional(PaymentStatus),
        lead_id: Schema.optional(Text).annotate({ description: "Only this lead's orders" }),
        created_after: Schema.optional(Text).annotate({
          description: "Only orders created at or after this ISO 8601 time"
        }),
        created_before: Schema.optional(Text).annotate({ description: "Only orders created before this ISO 8601 time" })
      },
      success: OrderList,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "List orders",
        description: "Newest first. Needs `orders:read` or `orders:write`."
      })
    ),
    Idempotent.create("create", "/", {
      payload: CreateOrder,
      success: Order,
      error: [Forbidden, ValidationError, InsufficientStock, Conflict]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Place an order",
        description: `A product line names its product (\`product_id\` or \`sku\`; the product must be active and priced in the order's currency) and takes its name, SKU and price from it; a custom line has \`name\` and \`unit_amount\`. Amounts are integers of the currency's minor unit, computed by the server: \`amount_total\` = lines + \`amount_shipping\` − \`amount_discount\`. Tracked stock is taken in the same transaction (409 \`insufficient_stock\` and nothing taken when a product has too little). A lead or product that is not in the account is a 400. The order starts \`pending\` and \`unpaid\` and \`order.created\` is emitted. ${ETAG} Needs \`orders:write\`.`
      })
    ),
    HttpApiEndpoint.get("get", "/:id", {
      params: OrderId,
      success: Order,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Get an order",
        description: `${ETAG} Needs \`orders:read\` or \`orders:write\`.`
      })
    ),
    HttpApiEndpoint.patch("update", "/:id", {
      params: OrderId,
      headers: IfMatchHeaders,
      payload: UpdateOrder,
      success: Order,
      error: [Forbidden, NotFound, ValidationError, InvalidTransition, PreconditionFailed]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Move an order, or change its note, tracking or metadata",
        description: `\`status\` moves forward along pending → confirmed → shipped → delivered (skipping allowed) or to \`cancelled\` from any status but delivered; \`payment_status\` moves unpaid → paid (not on a cancelled order) → refunded. Anything else is 409 \`invalid_transition\`, whose \`details\` list the states allowed next. Cancelling a pending or confirmed order gives its tracked stock back. Each move stamps its \`<status>_at\`; a change of either status emits one \`order.status_changed\` with \`previous_attributes\`. With \`If-Match\`, only if the order is still at that version (412 \`precondition_failed\` otherwise). Items, currency and amounts never change: cancel and place a new order. ${ETAG} Needs \`orders:write\`.`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/orders")
  .annotateMerge(
    OpenApi.annotations({
      title: "Orders",
      description:
        "Orders with server-computed totals, stock that never oversells, and two status machines (docs/contract-commerce-ai.md §3). Orders are never deleted: cancel instead."
    })
  ) {}

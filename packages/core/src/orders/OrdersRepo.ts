import { Context, type Effect } from "effect"
import type { Conflict } from "../Errors.ts"
import type { Bounds } from "../metrics/Calendar.ts"
import type { Listed, Page } from "../Pagination.ts"
import type { Order, OrderFilter } from "./Order.ts"

/** Order storage, scoped to one account. A WhatsApp message places at most one order. */
export class OrdersRepo extends Context.Service<
  OrdersRepo,
  {
    /** Conflict when the order's `whatsapp_message_id` placed an order already. */
    readonly insert: (accountId: string, order: Order) => Effect.Effect<void, Conflict>
    /** Newest first (`created_at` desc, then `id` desc). */
    readonly list: (accountId: string, filter: OrderFilter, page: Page) => Effect.Effect<Listed<Order>>
    readonly find: (accountId: string, id: string) => Effect.Effect<Order | undefined>
    /** How many orders were created (`created_at`), or cancelled (`cancelled_at`), in each bucket. */
    readonly countPerBucket: (
      accountId: string,
      moment: "created" | "cancelled",
      bounds: Bounds
    ) => Effect.Effect<ReadonlyArray<number>>
    /** `amount_total` of the orders paid (`payment_status` paid, `paid_at`) in each bucket, in one currency. */
    readonly revenuePerBucket: (
      accountId: string,
      currency: string,
      bounds: Bounds
    ) => Effect.Effect<ReadonlyArray<number>>
    /** The orders paid in the window, per currency (sorted by code): their `amount_total` summed, and how many. */
    readonly revenue: (
      accountId: string,
      window: Bounds
    ) => Effect.Effect<ReadonlyArray<{ readonly currency: string; readonly amount: number; readonly orders: number }>>
    /** The order, locked for the caller's transaction where the store can lock: transitions are checked on it. */
    readonly findForUpdate: (accountId: string, id: string) => Effect.Effect<Order | undefined>
    /** The order a WhatsApp message (wamid) placed. */
    readonly findByWhatsAppMessage: (accountId: string, wamid: string) => Effect.Effect<Order | undefined>
    readonly update: (accountId: string, order: Order) => Effect.Effect<void>
  }
>()("core/OrdersRepo") {}

import { Context, type Effect } from "effect"
import type { Conflict } from "../Errors.ts"
import type { Page, Slice } from "../Pagination.ts"
import type { Order, OrderFilter } from "./Order.ts"

/** Order storage, scoped to one account. A WhatsApp message places at most one order. */
export class OrdersRepo extends Context.Service<
  OrdersRepo,
  {
    /** Conflict when the order's `whatsapp_message_id` placed an order already. */
    readonly insert: (accountId: string, order: Order) => Effect.Effect<void, Conflict>
    /** Newest first (`created_at` desc, then `id` desc). */
    readonly list: (accountId: string, filter: OrderFilter, page: Page) => Effect.Effect<Slice<Order>>
    readonly find: (accountId: string, id: string) => Effect.Effect<Order | undefined>
    /** The order, locked for the caller's transaction where the store can lock: transitions are checked on it. */
    readonly findForUpdate: (accountId: string, id: string) => Effect.Effect<Order | undefined>
    /** The order a WhatsApp message (wamid) placed. */
    readonly findByWhatsAppMessage: (accountId: string, wamid: string) => Effect.Effect<Order | undefined>
    readonly update: (accountId: string, order: Order) => Effect.Effect<void>
  }
>()("core/OrdersRepo") {}

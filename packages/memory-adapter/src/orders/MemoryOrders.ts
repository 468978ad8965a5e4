import { Effect, Layer } from "effect"
import * as Calendar from "@leadline/core/metrics/Calendar"
import { Conflict } from "@leadline/core/Errors"
import { matches, type Order, type OrderFilter } from "@leadline/core/orders/Order"
import { OrdersRepo } from "@leadline/core/orders/OrdersRepo"
import * as MemoryLocks from "../MemoryLocks.ts"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly order: Order
}

const unfiltered = (filter: OrderFilter) => Object.values(filter).every((value) => value === undefined)

/**
 * Orders by account, newest first. A WhatsApp message places at most one order (a unique
 * wamid per account, as a partial unique index: orders from the API have none), so a
 * redelivered webhook cannot order twice. `findForUpdate` locks the order for its transaction.
 */
export const layer = Layer.sync(OrdersRepo)(() => {
  const orders = MemoryTable.make({
    primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.order.id),
    unique: {
      wamid: (row) =>
        row.order.whatsapp_message_id === null
          ? undefined
          : MemoryTable.key(row.accountId, row.order.whatsapp_message_id)
    },
    indexes: { account: (row) => row.accountId },
    order: MemoryTable.newestFirst(
      (row: Row) => row.order.created_at,
      (row) => row.order.id
    )
  })
  const locks = MemoryLocks.make()
  const find = (accountId: string, id: string) => orders.get(MemoryTable.key(accountId, id))?.order
  const accountOrders = (accountId: string) => Array.from(orders.scan("account", accountId), (row) => row.order)
  const paid = (accountId: string) =>
    accountOrders(accountId).filter((order) => order.payment_status === "paid" && order.paid_at !== null)

  return OrdersRepo.of({
    insert: (accountId, order) =>
      Effect.flatMap(
        atomically((tx) => orders.insert(tx, { accountId, order })),
        (violation) =>
          violation === undefined
            ? Effect.void
            : Effect.fail(new Conflict({ message: "This WhatsApp message placed an order already" }))
      ),
    list: (accountId, filter, page) =>
      Effect.sync(() => {
        const slice = orders.page(
          "account",
          accountId,
          page,
          unfiltered(filter) ? undefined : (row) => matches(filter, row.order)
        )
        return { items: slice.items.map((row) => row.order), total: slice.total }
      }),
    find: (accountId, id) => Effect.sync(() => find(accountId, id)),
    countPerBucket: (accountId, moment, bounds) =>
      Effect.sync(() =>
        Calendar.countPerBucket(
          bounds,
          accountOrders(accountId).flatMap((order) => {
            const at = moment === "created" ? order.created_at : order.cancelled_at
            return at === null ? [] : [Date.parse(at)]
          })
        )
      ),
    revenuePerBucket: (accountId, currency, bounds) =>
      Effect.sync(() =>
        Calendar.sumPerBucket(
          bounds,
          paid(accountId)
            .filter((order) => order.currency === currency)
            .map((order) => [Date.parse(order.paid_at!), order.amount_total] as const)
        )
      ),
    revenue: (accountId, window) =>
      Effect.sync(() => {
        const totals = new Map<string, { currency: string; amount: number; orders: number }>()
        for (const order of paid(accountId)) {
          if (Calendar.bucketOf(window, Date.parse(order.paid_at!)) !== 0) continue
          const total = totals.get(order.currency) ?? { currency: order.currency, amount: 0, orders: 0 }
          totals.set(order.currency, { ...total, amount: total.amount + order.amount_total, orders: total.orders + 1 })
        }
        return [...totals.values()].sort((a, b) => (a.currency < b.currency ? -1 : 1))
      }),
    findForUpdate: (accountId, id) =>
      Effect.andThen(
        locks.lock(MemoryTable.key(accountId, id)),
        Effect.sync(() => find(accountId, id))
      ),
    findByWhatsAppMessage: (accountId, wamid) =>
      Effect.sync(() => orders.find("wamid", MemoryTable.key(accountId, wamid))?.order),
    update: (accountId, order) =>
      Effect.flatMap(
        atomically((tx) => orders.update(tx, { accountId, order })),
        // The port has no Conflict to give: an order's wamid is set when it is placed and never changes.
        (before) =>
          before instanceof MemoryTable.Violation
            ? Effect.die(new Error(`MemoryOrders: order ${order.id} would take another order's wamid`))
            : Effect.void
      )
  })
})

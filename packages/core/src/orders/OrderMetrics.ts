import { Effect, Schema } from "effect"
import * as Metrics from "../metrics/Metrics.ts"
import { OrdersRepo } from "./OrdersRepo.ts"

export const Revenue = Schema.Struct({
  currency: Schema.String,
  amount: Schema.Int.annotate({ description: "`amount_total` summed, in the currency's minor units" }),
  orders: Schema.Int
}).annotate({ identifier: "Revenue" })

export const OrdersSummary = Schema.Struct({
  created: Schema.Int.annotate({ description: "Orders placed in the range" }),
  cancelled: Schema.Int.annotate({ description: "Orders whose `cancelled_at` is in the range" }),
  revenue: Schema.Array(Revenue).annotate({
    description:
      "Orders paid in the range (`payment_status` paid, `paid_at` in the range), per currency, sorted by code; never summed across currencies"
  })
}).annotate({ identifier: "OrdersSummary" })

const total = (values: ReadonlyArray<number>) => values[0] ?? 0

export const metrics = Metrics.make({
  key: "orders",
  summary: OrdersSummary,
  summarize: (accountId, window) =>
    OrdersRepo.use((orders) =>
      Effect.all(
        {
          created: Effect.map(orders.countPerBucket(accountId, "created", window), total),
          cancelled: Effect.map(orders.countPerBucket(accountId, "cancelled", window), total),
          revenue: orders.revenue(accountId, window)
        },
        { concurrency: "unbounded" }
      )
    ),
  series: {
    orders_created: {
      description: "Orders placed",
      values: (accountId, bounds) => OrdersRepo.use((orders) => orders.countPerBucket(accountId, "created", bounds))
    },
    revenue: {
      description: "`amount_total` of the orders paid, in the minor units of the `currency` asked for",
      perCurrency: true,
      values: (accountId, bounds, currency) =>
        OrdersRepo.use((orders) => orders.revenuePerBucket(accountId, currency ?? "", bounds))
    }
  }
})

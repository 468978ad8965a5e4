import * as Slice from "../Slice.ts"
import * as Orders0010 from "./migrations/0010_orders.ts"
import * as OrdersPaidCancelled0018 from "./migrations/0018_orders_paid_cancelled.ts"
import * as SqlOrders from "./SqlOrders.ts"

/** Orders with their lines as snapshots (CONTRACT-COMMERCE-AI §3); their stock moves are the catalogue's. */
export const slice = Slice.make({
  name: "orders",
  layer: SqlOrders.layer,
  migrations: [Orders0010.migration, OrdersPaidCancelled0018.migration]
})

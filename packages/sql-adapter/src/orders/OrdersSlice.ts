import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as Orders0010 from "./migrations/0010_orders.ts"
import * as OrdersPaidCancelled0018 from "./migrations/0018_orders_paid_cancelled.ts"
import * as OrderNoticeSettings0029 from "./migrations/0029_order_notice_settings.ts"
import * as SqlOrderNoticeSettings from "./SqlOrderNoticeSettings.ts"
import * as SqlOrders from "./SqlOrders.ts"

/**
 * Orders with their lines as snapshots (docs/contract-commerce-ai.md §3); their stock moves are the
 * catalogue's. Each account's order-notice settings.
 */
export const slice = Slice.make({
  name: "orders",
  layer: Layer.mergeAll(SqlOrders.layer, SqlOrderNoticeSettings.layer),
  migrations: [Orders0010.migration, OrdersPaidCancelled0018.migration, OrderNoticeSettings0029.migration]
})

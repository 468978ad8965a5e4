import * as Slice from "../Slice.ts"
import * as OrderEvents from "./OrderEvents.ts"
import * as OrderMetrics from "./OrderMetrics.ts"
import { Orders } from "./Orders.ts"

export const slice = Slice.make({
  name: "orders",
  layer: Orders.layer,
  events: [OrderEvents.created, OrderEvents.statusChanged],
  metrics: OrderMetrics.metrics
})

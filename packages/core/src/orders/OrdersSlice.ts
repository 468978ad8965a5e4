import { Layer } from "effect"
import { Messages } from "../messages/Messages.ts"
import * as Slice from "../Slice.ts"
import * as OrderEvents from "./OrderEvents.ts"
import * as OrderMetrics from "./OrderMetrics.ts"
import { OrderNotices } from "./OrderNotices.ts"
import { Orders } from "./Orders.ts"

/** Orders and their status notices, which queue through Messages (a stateless service), as any send does. */
export const layer = Layer.provideMerge(Orders.layer, OrderNotices.layer.pipe(Layer.provide(Messages.layer)))

export const slice = Slice.make({
  name: "orders",
  layer,
  events: [OrderEvents.created, OrderEvents.statusChanged],
  metrics: OrderMetrics.metrics
})

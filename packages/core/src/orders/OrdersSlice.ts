import { Layer } from "effect"
import { Messages } from "../messages/Messages.ts"
import * as Slice from "../Slice.ts"
import * as OrderEvents from "./OrderEvents.ts"
import * as OrderMetrics from "./OrderMetrics.ts"
import * as OrderReactions from "./OrderReactions.ts"
import { OrderNotices } from "./OrderNotices.ts"
import { Orders } from "./Orders.ts"
import { WhatsAppOrders } from "./WhatsAppOrders.ts"

/** Orders and their status notices, which queue through Messages (a stateless service), as any send does. */
const layer = Layer.provideMerge(Orders.layer, OrderNotices.layer.pipe(Layer.provide(Messages.layer)))

export const slice = Slice.make({
  name: "orders",
  layer,
  events: [OrderEvents.created, OrderEvents.statusChanged],
  metrics: OrderMetrics.metrics,
  // WhatsApp `order` messages place orders as the API's create does.
  reactions: [OrderReactions.fromInbound.pipe(Layer.provide(WhatsAppOrders.layer.pipe(Layer.provide(layer))))]
})

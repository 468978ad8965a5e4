import { CampaignProgress } from "../campaigns/CampaignProgress.ts"
import * as Slice from "../Slice.ts"
import * as OrdersSlice from "../orders/OrdersSlice.ts"
import { WhatsAppOrders } from "../orders/WhatsAppOrders.ts"
import { Inbound } from "../whatsapp/Inbound.ts"
import { Layer } from "effect"
import * as MessageEvents from "./MessageEvents.ts"
import * as MessageMetrics from "./MessageMetrics.ts"
import { Messages } from "./Messages.ts"
import { MessageStatuses } from "./MessageStatuses.ts"

export const slice = Slice.make({
  name: "messages",
  layer: Layer.mergeAll(Messages.layer, Inbound.layer).pipe(
    Layer.provideMerge(MessageStatuses.layer.pipe(Layer.provide(CampaignProgress.layer))),
    // WhatsApp `order` messages place orders as the orders slice does.
    Layer.provide(WhatsAppOrders.layer.pipe(Layer.provide(OrdersSlice.layer)))
  ),
  events: [MessageEvents.received, MessageEvents.sent, MessageEvents.statusChanged],
  metrics: MessageMetrics.metrics
})

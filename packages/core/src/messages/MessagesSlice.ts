import { CampaignProgress } from "../campaigns/CampaignProgress.ts"
import * as Slice from "../Slice.ts"
import { Inbound } from "../whatsapp/Inbound.ts"
import { Layer } from "effect"
import * as MessageEvents from "./MessageEvents.ts"
import { Messages } from "./Messages.ts"
import { MessageStatuses } from "./MessageStatuses.ts"

export const slice = Slice.make({
  name: "messages",
  layer: Layer.mergeAll(Messages.layer, Inbound.layer).pipe(
    Layer.provideMerge(MessageStatuses.layer.pipe(Layer.provide(CampaignProgress.layer)))
  ),
  events: [MessageEvents.received, MessageEvents.sent, MessageEvents.statusChanged]
})

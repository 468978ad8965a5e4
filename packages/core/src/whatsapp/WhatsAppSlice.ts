import { Layer } from "effect"
import { MessageStatuses } from "../messages/MessageStatuses.ts"
import * as Slice from "../Slice.ts"
import { ChannelHealth } from "./ChannelHealth.ts"
import { Inbound } from "./Inbound.ts"
import * as InboundMedia from "./InboundMedia.ts"

/**
 * WhatsApp's inbound side: the webhook's typed batches (read from Meta's JSON by
 * `@leadline/whatsapp-adapter`), messages and statuses stored in batches. Statuses merge through
 * `MessageStatuses`, a stateless service, as the sender's outcomes do. Meta's account webhooks
 * (quality, limits, restrictions) reach the channels through `ChannelHealth`. Inbound files join
 * the fetch queue (`InboundMedia.ts`; `MediaFetcher.ts` keeps their bytes).
 */
export const slice = Slice.make({
  name: "whatsapp",
  layer: Layer.merge(Inbound.layer.pipe(Layer.provide(MessageStatuses.layer)), ChannelHealth.layer),
  events: [],
  reactions: [InboundMedia.enqueueFiles]
})

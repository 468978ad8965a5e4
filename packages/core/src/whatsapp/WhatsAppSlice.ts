import { Layer } from "effect"
import { MessageStatuses } from "../messages/MessageStatuses.ts"
import * as Slice from "../Slice.ts"
import { Inbound } from "./Inbound.ts"
import * as InboundMedia from "./InboundMedia.ts"

/**
 * WhatsApp's inbound side: the webhook's typed batches (read from Meta's JSON by
 * `@leadline/whatsapp-adapter`), messages and statuses stored in batches. Statuses merge through
 * `MessageStatuses`, a stateless service, as the sender's outcomes do. Inbound files join the
 * fetch queue (`InboundMedia.ts`; `MediaFetcher.ts` keeps their bytes).
 */
export const slice = Slice.make({
  name: "whatsapp",
  layer: Inbound.layer.pipe(Layer.provide(MessageStatuses.layer)),
  events: [],
  reactions: [InboundMedia.enqueueFiles]
})

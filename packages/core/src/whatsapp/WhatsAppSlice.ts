import { Layer } from "effect"
import { MessageStatuses } from "../messages/MessageStatuses.ts"
import * as Slice from "../Slice.ts"
import { Inbound } from "./Inbound.ts"

/**
 * Meta's webhook: inbound messages and statuses stored in batches. Statuses merge through
 * `MessageStatuses`, a stateless service, as the sender's outcomes do.
 */
export const slice = Slice.make({
  name: "whatsapp",
  layer: Inbound.layer.pipe(Layer.provide(MessageStatuses.layer)),
  events: []
})

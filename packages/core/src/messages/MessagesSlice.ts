import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import { InboundReceived } from "./InboundReceived.ts"
import * as MessageEvents from "./MessageEvents.ts"
import * as MessageMetrics from "./MessageMetrics.ts"
import * as MessageReactions from "./MessageReactions.ts"
import { MessageMedia } from "./MessageMedia.ts"
import { MediaUploads } from "./MediaUploads.ts"
import { Messages } from "./Messages.ts"
import { MessageStatuses } from "./MessageStatuses.ts"
import { QueueExits } from "./QueueExits.ts"
import { ReadReceipts } from "./ReadReceipts.ts"

export const slice = Slice.make({
  name: "messages",
  layer: Layer.mergeAll(Messages.layer, ReadReceipts.layer, MessageMedia.layer, MediaUploads.layer).pipe(
    Layer.provideMerge(MessageStatuses.layer)
  ),
  events: [MessageEvents.received, MessageEvents.sent, MessageEvents.statusChanged],
  metrics: MessageMetrics.metrics,
  hooks: [QueueExits.layer, InboundReceived.layer],
  reactions: [MessageReactions.removeLeadThreads]
})

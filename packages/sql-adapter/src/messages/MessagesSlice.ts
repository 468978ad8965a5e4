import * as Slice from "../Slice.ts"
import { Layer } from "effect"
import * as MessageSending0007 from "./migrations/0007_message_sending.ts"
import * as MessagesByTime0017 from "./migrations/0017_messages_by_time.ts"
import * as MessagesByTimeDropped0025 from "./migrations/0025_messages_by_time_dropped.ts"
import * as InteractiveAndReplies0033 from "./migrations/0033_interactive_and_replies.ts"
import * as SqlMessages from "./SqlMessages.ts"
import * as SqlOutboundQueue from "./SqlOutboundQueue.ts"

/** Messages in and out (their table came with conversations' migration 0005), and the sender's queue. */
export const slice = Slice.make({
  name: "messages",
  layer: Layer.mergeAll(SqlMessages.layer, SqlOutboundQueue.layer),
  migrations: [
    MessageSending0007.migration,
    MessagesByTime0017.migration,
    MessagesByTimeDropped0025.migration,
    InteractiveAndReplies0033.migration
  ]
})

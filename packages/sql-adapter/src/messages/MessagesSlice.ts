import * as Slice from "../Slice.ts"
import { Layer } from "effect"
import * as MessageSending0007 from "./migrations/0007_message_sending.ts"
import * as MessagesByTime0017 from "./migrations/0017_messages_by_time.ts"
import * as MessagesByTimeDropped0025 from "./migrations/0025_messages_by_time_dropped.ts"
import * as InteractiveAndReplies0033 from "./migrations/0033_interactive_and_replies.ts"
import * as MessageMedia0031 from "./migrations/0031_message_media.ts"
import * as UploadedMedia0037 from "./migrations/0037_uploaded_media.ts"
import * as MediaKeyedByAccount0045 from "./migrations/0045_media_keyed_by_account.ts"
import * as SqlMediaQueue from "./SqlMediaQueue.ts"
import * as SqlMediaStore from "./SqlMediaStore.ts"
import * as SqlMessages from "./SqlMessages.ts"
import * as SqlOutboundQueue from "./SqlOutboundQueue.ts"
import * as SqlUploadedMedia from "./SqlUploadedMedia.ts"

/**
 * Messages in and out (their table came with conversations' migration 0005), the sender's queue
 * the inbound files' fetch queue, the files uploaded to be sent; and the PostgreSQL media store (`SqlApp.ts` takes another in its place).
 */
export const slice = Slice.make({
  name: "messages",
  layer: Layer.mergeAll(
    SqlMessages.layer,
    SqlOutboundQueue.layer,
    SqlMediaQueue.layer,
    SqlMediaStore.layer,
    SqlUploadedMedia.layer
  ),
  migrations: [
    MessageSending0007.migration,
    MessagesByTime0017.migration,
    MessagesByTimeDropped0025.migration,
    MessageMedia0031.migration,
    InteractiveAndReplies0033.migration,
    UploadedMedia0037.migration,
    MediaKeyedByAccount0045.migration
  ]
})

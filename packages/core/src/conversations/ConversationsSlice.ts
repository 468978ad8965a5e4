import * as Slice from "../Slice.ts"
import * as ConversationEvents from "./ConversationEvents.ts"
import * as ConversationMetrics from "./ConversationMetrics.ts"
import { Conversations } from "./Conversations.ts"

export const slice = Slice.make({
  name: "conversations",
  layer: Conversations.layer,
  events: [ConversationEvents.created, ConversationEvents.assigned, ConversationEvents.statusChanged],
  metrics: ConversationMetrics.metrics
})

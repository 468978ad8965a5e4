import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as ConversationsMessages0005 from "./migrations/0005_conversations_messages.ts"
import * as ConversationHandoff0014 from "./migrations/0014_conversation_handoff.ts"
import * as ConversationsByCreation0019 from "./migrations/0019_conversations_by_creation.ts"
import * as ConversationsByCreationDropped0026 from "./migrations/0026_conversations_by_creation_dropped.ts"
import * as ConversationsByLead0028 from "./migrations/0028_conversations_by_lead.ts"
import * as SqlConversations from "./SqlConversations.ts"
import * as SqlFirstResponses from "./SqlFirstResponses.ts"
import * as SqlThreadSummaries from "./SqlThreadSummaries.ts"

/** Conversations; the migration makes the messages table too, as the two are one unit of storage. */
export const slice = Slice.make({
  name: "conversations",
  layer: Layer.mergeAll(SqlConversations.layer, SqlFirstResponses.layer, SqlThreadSummaries.layer),
  migrations: [
    ConversationsMessages0005.migration,
    ConversationHandoff0014.migration,
    ConversationsByCreation0019.migration,
    ConversationsByCreationDropped0026.migration,
    ConversationsByLead0028.migration
  ]
})

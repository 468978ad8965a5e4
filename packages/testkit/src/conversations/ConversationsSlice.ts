import * as Slice from "../Slice.ts"
import * as ConversationsContract from "./ConversationsContract.ts"
import * as ConversationsResource from "./ConversationsResource.ts"
import * as ConversationsSecurity from "./ConversationsSecurity.ts"

/** Conversations and messages, and WhatsApp's webhook that makes them. */
export const slice = Slice.make({
  name: "conversations",
  resources: [ConversationsResource.conversations, ConversationsResource.messages],
  contract: ConversationsContract.contract,
  admits: ConversationsSecurity.admits
})

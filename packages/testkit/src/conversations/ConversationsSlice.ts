import * as Slice from "../Slice.ts"
import * as ConversationsContract from "./ConversationsContract.ts"
import * as ConversationsResource from "./ConversationsResource.ts"
import * as ConversationsSecurity from "./ConversationsSecurity.ts"
import * as InteractiveContract from "./InteractiveContract.ts"
import * as OutboundMediaContract from "./OutboundMediaContract.ts"

/** Conversations and messages, and WhatsApp's webhook that makes them. */
export const slice = Slice.make({
  name: "conversations",
  resources: [ConversationsResource.conversations, ConversationsResource.messages, ConversationsResource.media],
  contract: (context) => {
    ConversationsContract.contract(context)
    InteractiveContract.contract(context)
    OutboundMediaContract.contract(context)
  },
  admits: ConversationsSecurity.admits
})

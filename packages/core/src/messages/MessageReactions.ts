import { Effect } from "effect"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import * as Hook from "../Hook.ts"
import { LeadRemoval } from "../leads/LeadRemoval.ts"
import { MessageUsage, periodOf } from "../usage/MessageUsage.ts"
import { MessagesRepo } from "./MessagesRepo.ts"
import { QueueExits } from "./QueueExits.ts"

/**
 * A deleted lead's conversations and messages go with it; messages still waiting to be sent give
 * their usage back, and a campaign waiting only for them completes (they show as skipped).
 */
export const removeLeadThreads = Hook.on(
  LeadRemoval,
  "messages",
  Effect.gen(function* () {
    const messages = yield* MessagesRepo
    const conversations = yield* ConversationsRepo
    const usage = yield* MessageUsage
    const exits = yield* QueueExits
    return ({ accountId, leadId }) =>
      Effect.gen(function* () {
        const gone = yield* messages.removeForLead(accountId, leadId)
        const unsent = gone.filter((message) => message.direction === "outbound" && message.status === "queued")
        for (const message of unsent) yield* usage.release(accountId, periodOf(message.created_at), 1)
        yield* conversations.removeForLead(accountId, leadId)
        yield* exits.run({
          accountId,
          touched: unsent.flatMap((m) =>
            m.campaign_id === null ? [] : [{ campaignId: m.campaign_id, leftQueue: true }]
          )
        })
      })
  })
)

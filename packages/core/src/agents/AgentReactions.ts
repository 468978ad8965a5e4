import { Effect } from "effect"
import * as Hook from "../Hook.ts"
import * as Ids from "../Ids.ts"
import { Outbox } from "../events/Outbox.ts"
import { SourceRemoval } from "../knowledge/SourceRemoval.ts"
import { InboundReceived } from "../messages/InboundReceived.ts"
import { intentOf, mayBeKeyword } from "../optouts/OptOutKeywords.ts"
import { DEFAULT_SETTINGS, OptOutSettingsRepo } from "../optouts/OptOutSettings.ts"
import { AgentJobsRepo } from "./AgentJobsRepo.ts"
import { isHeld } from "./AgentResponder.ts"
import { forgetSource } from "./Agents.ts"
import { AgentsRepo } from "./AgentsRepo.ts"

/**
 * The account's enabled agent is to answer each new text message of a conversation no person
 * holds, but an opt-out or opt-in keyword (docs/contract-messaging.md §8.6): the lead asked for
 * silence, or only to come back, not for an answer. The job commits with the message, so a crash
 * forgets none.
 */
export const answerInbound = Hook.on(
  InboundReceived,
  "agents",
  Effect.gen(function* () {
    const agents = yield* AgentsRepo
    const agentJobs = yield* AgentJobsRepo
    const optOutSettings = yield* OptOutSettingsRepo
    return ({ accountId, messages, threads }) =>
      Effect.gen(function* () {
        const agent = yield* agents.enabledOn(accountId, "whatsapp")
        if (agent === undefined) return
        const threadById = new Map(threads.map((thread) => [thread.id, thread]))
        const texts = messages.filter(
          (message) =>
            message.type === "text" && message.text !== null && !isHeld(threadById.get(message.conversation_id)!)
        )
        // The settings are read only when a text is short enough to be a keyword: most are not.
        const keywords = texts.some((message) => mayBeKeyword(message.text))
          ? ((yield* optOutSettings.find(accountId)) ?? DEFAULT_SETTINGS)
          : undefined
        const answerable =
          keywords === undefined ? texts : texts.filter((message) => intentOf(keywords, message.text) === undefined)
        const jobs = []
        for (const message of answerable) {
          jobs.push({
            id: yield* Ids.make("aj"),
            conversationId: message.conversation_id,
            messageId: message.id,
            agentId: agent.id
          })
        }
        if (jobs.length > 0) yield* agentJobs.enqueue(accountId, jobs, yield* Ids.now)
      })
  })
)

/** A deleted knowledge source leaves every agent that cited it (each change announced). */
export const forgetRemovedSource = Hook.on(
  SourceRemoval,
  "agents",
  Effect.gen(function* () {
    const agents = yield* AgentsRepo
    const outbox = yield* Outbox
    return ({ accountId, sourceId }) =>
      forgetSource(accountId, sourceId).pipe(
        Effect.provideService(AgentsRepo, agents),
        Effect.provideService(Outbox, outbox)
      )
  })
)

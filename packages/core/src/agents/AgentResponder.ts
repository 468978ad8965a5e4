import { Clock, Context, Effect, Layer } from "effect"
import type { Conversation } from "../conversations/Conversation.ts"
import { AiModel } from "../llm/AiModel.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import type { AiProviderError, AiProviderTimeout } from "../Errors.ts"
import * as Loop from "../internal/loop.ts"
import { KnowledgeRepo } from "../knowledge/KnowledgeRepo.ts"
import { Messages } from "../messages/Messages.ts"
import { MessagesRepo } from "../messages/MessagesRepo.ts"
import { Transactor } from "../Transactor.ts"
import type { Agent } from "./Agent.ts"
import { type AgentJob, AgentJobsRepo } from "./AgentJobsRepo.ts"
import * as AgentReply from "./AgentReply.ts"
import { AgentsRepo } from "./AgentsRepo.ts"

export interface Options {
  /** Jobs claimed per round, answered concurrently; 8 unless set. */
  readonly batch?: number | undefined
  /** Attempts before a message whose model keeps failing is handed to a person; 3 unless set. */
  readonly maxAttempts?: number | undefined
}

/** How many turns of the conversation the model sees before the message it answers. */
export const HISTORY_TURNS = 20

/** A conversation no agent answers: a person holds it, or an agent handed it off. */
export const isHeld = (conversation: Conversation): boolean =>
  conversation.assigned_user_id !== null || conversation.handoff !== null

/** The claim outlives the model's timeout, so a slow provider does not let a second responder in. */
const LEASE_MILLIS = 120_000

/**
 * Live replies (docs/contract-commerce-ai.md §5): answers the inbound WhatsApp messages the webhook queued
 * for the account's enabled agent. The pipeline (and its model call) runs outside any transaction;
 * then one transaction checks that no person took the conversation meanwhile and queues the reply
 * (its `message.sent` follows when WhatsApp takes it) or records the handoff on the conversation.
 */
export class AgentResponder extends Context.Service<AgentResponder, { readonly runOnce: Effect.Effect<number> }>()(
  "core/AgentResponder"
) {
  static readonly layer = (
    options: Options = {}
  ): Layer.Layer<
    AgentResponder,
    never,
    AgentJobsRepo | AgentsRepo | ConversationsRepo | MessagesRepo | KnowledgeRepo | Messages | Transactor
  > =>
    Layer.effect(
      AgentResponder,
      Effect.gen(function* () {
        const jobs = yield* AgentJobsRepo
        const agents = yield* AgentsRepo
        const conversations = yield* ConversationsRepo
        const messages = yield* MessagesRepo
        const knowledge = yield* KnowledgeRepo
        const sending = yield* Messages
        const transactor = yield* Transactor
        const model = yield* AiModel
        const batch = options.batch ?? 8
        const maxAttempts = options.maxAttempts ?? 3
        const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

        /** The conversation's text turns before the message, oldest first. */
        const historyBefore = Effect.fnUntraced(function* (job: AgentJob, anchor: Parameters<typeof messages.list>[3]) {
          const page = yield* messages.list(
            job.accountId,
            job.conversationId,
            { limit: HISTORY_TURNS, offset: 0 },
            anchor
          )
          return page.items
            .filter((message) => message.type === "text" && message.text !== null)
            .reverse()
            .map((message) => ({
              role: message.direction === "inbound" ? ("customer" as const) : ("agent" as const),
              text: message.text!
            }))
        })

        const handOff = (
          job: AgentJob,
          conversation: Conversation,
          agent: Agent,
          reason: "keyword" | "no_knowledge" | "model" | "error",
          at: string
        ) =>
          conversations.update(job.accountId, {
            ...conversation,
            status:
              conversation.status === "resolved" || conversation.status === "snoozed" ? "open" : conversation.status,
            snoozed_until: null,
            handoff: { agent_id: agent.id, reason, at },
            updated_at: at
          })

        /** One job: the pipeline, then its outcome in one transaction. */
        const answer = Effect.fnUntraced(function* (job: AgentJob) {
          const agent = yield* agents.find(job.accountId, job.agentId)
          const conversation = yield* conversations.find(job.accountId, job.conversationId)
          const message = yield* messages.find(job.accountId, job.messageId)
          const skip = (why: string) =>
            Effect.flatMap(now, (at) => jobs.finish(job.accountId, job.id, "skipped", why, at))
          if (agent === undefined || !agent.enabled) return yield* skip("the agent is gone or disabled")
          if (conversation === undefined || message === undefined || message.text === null) {
            return yield* skip("the message or its conversation is gone")
          }
          if (isHeld(conversation)) return yield* skip("a person holds the conversation")
          const history = yield* historyBefore(job, message)
          const outcome = yield* AgentReply.reply(job.accountId, agent, message.text, history).pipe(
            Effect.provideService(KnowledgeRepo, knowledge),
            Effect.provideService(AiModel, model),
            Effect.map((outcome) => ({ _tag: "Outcome" as const, outcome })),
            Effect.catch((error: AiProviderError | AiProviderTimeout) =>
              Effect.succeed({ _tag: "Failed" as const, error })
            )
          )
          yield* transactor.withTransaction(
            Effect.gen(function* () {
              const at = yield* now
              const current = yield* conversations.find(job.accountId, job.conversationId)
              if (current === undefined || isHeld(current)) {
                return yield* jobs.finish(
                  job.accountId,
                  job.id,
                  "skipped",
                  "a person took the conversation meanwhile",
                  at
                )
              }
              if (outcome._tag === "Failed") {
                const error = outcome.error._tag === "AiProviderTimeout" ? "the model timed out" : "the model failed"
                if (job.attempts < maxAttempts) {
                  const retryAt = new Date(Date.parse(at) + 15_000 * job.attempts).toISOString()
                  return yield* jobs.retry(job.accountId, job.id, retryAt, error, at)
                }
                // A customer must not wait on a model that keeps failing: a person takes over.
                yield* handOff(job, current, agent, "error", at)
                return yield* jobs.finish(job.accountId, job.id, "failed", error, at)
              }
              const reply = outcome.outcome
              if (reply.kind === "handoff") {
                yield* handOff(job, current, agent, reply.handoffReason!, at)
                return yield* jobs.finish(job.accountId, job.id, "handed_off", null, at)
              }
              yield* sending.reply(job.accountId, current, agent.id, reply.text).pipe(
                Effect.andThen(jobs.finish(job.accountId, job.id, "answered", null, at)),
                // Refused as any send would be (the channel disabled, the window closed, the plan's limit):
                // nothing was written, and the job says why.
                Effect.catch((refused) =>
                  jobs.finish(job.accountId, job.id, "skipped", `the reply was refused: ${refused._tag}`, at)
                )
              )
            })
          )
        })

        const runOnce = Effect.gen(function* () {
          const at = yield* Clock.currentTimeMillis
          const claimed = yield* jobs.claim(
            new Date(at).toISOString(),
            new Date(at + LEASE_MILLIS).toISOString(),
            batch
          )
          yield* Effect.forEach(
            claimed,
            (job) =>
              answer(job).pipe(
                Effect.catchCause((cause) => Effect.logWarning(`Agent reply to message ${job.messageId} failed`, cause))
              ),
            { concurrency: batch, discard: true }
          )
          return claimed.length
        }).pipe(Effect.withSpan("AgentResponder.runOnce"))

        return AgentResponder.of({ runOnce })
      })
    )
}

/**
 * Runs the responder for the life of the layer (in the server, or a worker process): as soon as
 * an inbound message's job commits (the jobs' wake-ups, as deliveries and sends are woken), and
 * every `intervalMillis` (1 s) as the fallback.
 */
export const loop = (options: { readonly intervalMillis?: number | undefined } = {}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const responder = yield* AgentResponder
      const jobs = yield* AgentJobsRepo
      yield* Loop.woken(
        "Answering inbound messages with agents",
        options.intervalMillis ?? 1_000,
        jobs.wakeups,
        responder.runOnce
      )
    })
  )

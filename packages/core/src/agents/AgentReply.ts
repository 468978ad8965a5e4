import { Effect } from "effect"
import { AiModel, type ChatMessage, type Completion, type Snippet } from "../llm/AiModel.ts"
import * as Prompt from "../llm/Prompt.ts"
import type { AiProviderError, AiProviderTimeout } from "../Errors.ts"
import { KnowledgeRepo } from "../knowledge/KnowledgeRepo.ts"
import { score } from "../knowledge/Search.ts"
import type { Agent } from "./Agent.ts"

/** The WhatsApp text limit: no reply is longer (docs/contract-commerce-ai.md §6, step 5). */
export const MAX_REPLY_CHARS = 4096

export interface Turn {
  readonly role: "customer" | "agent"
  readonly text: string
}

export type Kind = "answer" | "handoff" | "fallback"
export type HandoffReason = "keyword" | "no_knowledge" | "model"

export interface Outcome {
  readonly text: string
  readonly kind: Kind
  readonly handoffReason: HandoffReason | null
  readonly snippets: ReadonlyArray<Snippet>
  /** The model's answer; null when the pipeline decided without a model call. */
  readonly completion: Completion | null
  /** What a chat model was (or would be) sent; null when no model call was made. */
  readonly prompt: ReadonlyArray<Prompt.PromptMessage> | null
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The first handoff keyword that is a whole word of the message, in any case. */
export const keywordIn = (message: string, keywords: ReadonlyArray<string>): string | undefined =>
  keywords.find((keyword) =>
    new RegExp(`(?<![\\p{L}\\p{N}])${escaped(keyword.trim())}(?![\\p{L}\\p{N}])`, "iu").test(message)
  )

const trimmed = (text: string) => (text.length <= MAX_REPLY_CHARS ? text : `${text.slice(0, MAX_REPLY_CHARS - 1)}…`)

/**
 * The agent pipeline, one code path for the simulation and live replies (docs/contract-commerce-ai.md §6):
 * a handoff keyword hands off without a model call; otherwise the agent's sources are searched for
 * the message, no passage means handoff (or the fallback), and the model answers from the passages,
 * handing off when it says `HANDOFF`. It reads and calls, and writes nothing.
 */
export const reply = (
  accountId: string,
  agent: Agent,
  message: string,
  history: ReadonlyArray<Turn>
): Effect.Effect<Outcome, AiProviderError | AiProviderTimeout, KnowledgeRepo> =>
  Effect.gen(function* () {
    const handoff = (
      reason: HandoffReason,
      snippets: ReadonlyArray<Snippet>,
      completion: Completion | null,
      prompt: Outcome["prompt"]
    ): Outcome => ({
      text: agent.handoff.message,
      kind: "handoff",
      handoffReason: reason,
      snippets,
      completion,
      prompt
    })
    if (keywordIn(message, agent.handoff.keywords) !== undefined) return handoff("keyword", [], null, null)

    const knowledge = yield* KnowledgeRepo
    const hits =
      agent.max_snippets === 0
        ? []
        : yield* knowledge.search(accountId, {
            query: message,
            limit: agent.max_snippets,
            sourceIds: agent.knowledge_source_ids.length === 0 ? undefined : agent.knowledge_source_ids
          })
    const snippets: ReadonlyArray<Snippet> = hits.map((hit) => ({
      chunkId: hit.chunk.id,
      sourceId: hit.chunk.source_id,
      sourceTitle: hit.sourceTitle,
      text: hit.chunk.text,
      headline: hit.snippet,
      score: score(hit.allTerms, hit.rank)
    }))
    if (snippets.length === 0) {
      if (agent.handoff.on_no_knowledge) return handoff("no_knowledge", [], null, null)
      return {
        text: agent.fallback_message ?? agent.handoff.message,
        kind: "fallback",
        handoffReason: null,
        snippets,
        completion: null,
        prompt: null
      }
    }

    const messages: ReadonlyArray<ChatMessage> = [
      ...history.map((turn) => ({
        role: turn.role === "customer" ? ("user" as const) : ("assistant" as const),
        content: turn.text
      })),
      { role: "user", content: message }
    ]
    const request = {
      system: Prompt.system(agent.instructions),
      snippets,
      messages,
      model: agent.model,
      temperature: agent.temperature,
      maxOutputTokens: agent.max_output_tokens
    }
    const prompt = Prompt.messages(request)
    const model = yield* AiModel
    const completion = yield* model.complete(request)
    if (completion.text.trimStart().startsWith(Prompt.HANDOFF)) return handoff("model", snippets, completion, prompt)
    return {
      text: trimmed(completion.text.trim()),
      kind: "answer",
      handoffReason: null,
      snippets,
      completion,
      prompt
    }
  })

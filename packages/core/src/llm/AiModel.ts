import { Context, type Effect } from "effect"
import type { AiProviderError, AiProviderTimeout } from "../Errors.ts"
import * as BuiltinModel from "./BuiltinModel.ts"

/** One turn of the conversation the model continues: the customer's (`user`) or the agent's (`assistant`). */
export interface ChatMessage {
  readonly role: "user" | "assistant"
  readonly content: string
}

/** One knowledge passage offered to the model, as search found it. */
export interface Snippet {
  readonly chunkId: string
  readonly sourceId: string
  readonly sourceTitle: string
  readonly text: string
  /** The search's highlighted fragment of `text` (`ts_headline`): what an extractive model quotes. */
  readonly headline: string
  readonly score: number
}

export interface CompletionRequest {
  /** The system rules: the agent's instructions and the fixed answering rules, never untrusted text. */
  readonly system: string
  /**
   * The knowledge passages, untrusted: a model adapter puts them in a delimited block of their own,
   * outside `system`, so that what a source says cannot become a rule.
   */
  readonly snippets: ReadonlyArray<Snippet>
  /** The history, oldest first, then the customer's message last. */
  readonly messages: ReadonlyArray<ChatMessage>
  /** null: the deployment's default model. */
  readonly model: string | null
  readonly temperature: number
  readonly maxOutputTokens: number
}

export interface Completion {
  readonly text: string
  /** The provider's `finish_reason` (`stop`, `length` …), or `extractive` for the builtin model. */
  readonly finishReason: string
  readonly usage: { readonly inputTokens: number | null; readonly outputTokens: number | null }
  readonly model: { readonly provider: "builtin" | "openai_compatible"; readonly name: string }
}

/**
 * The language model behind agents and the simulation (docs/contract-commerce-ai.md §8): narrow on purpose,
 * so core stays off `effect/ai`'s unstable API and a fake is a few lines. The builtin extractive
 * model (no network) is the default; `openai_compatible` (@leadline/ai-adapter) replaces it where a
 * deployment provides one.
 */
export const AiModel: Context.Reference<AiModel> = Context.Reference<AiModel>("core/AiModel", {
  defaultValue: () => ({ complete: BuiltinModel.complete })
})

export interface AiModel {
  readonly complete: (request: CompletionRequest) => Effect.Effect<Completion, AiProviderError | AiProviderTimeout>
}

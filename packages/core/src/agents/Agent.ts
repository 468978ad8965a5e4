import { Schema } from "effect"
import { Text } from "../Text.ts"

/** docs/contract-commerce-ai.md §5: an AI agent that answers from the knowledge base. */
export const Handoff = Schema.Struct({
  keywords: Schema.Array(Schema.String).annotate({
    description: "Whole words, any case: a customer message with one goes to a person, without a model call"
  }),
  message: Schema.String.annotate({ description: "What the customer is told when the agent hands off" }),
  on_no_knowledge: Schema.Boolean.annotate({ description: "Hand off when no passage of the knowledge matches" })
}).annotate({ identifier: "AgentHandoff" })
export type Handoff = typeof Handoff.Type

export const CHANNELS = ["whatsapp"] as const
export const Channel = Schema.Literals(CHANNELS)

export const Agent = Schema.Struct({
  id: Schema.String.annotate({ description: "`agt_` followed by a sortable id" }),
  name: Schema.String.annotate({ description: "Unique in the account" }),
  description: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean.annotate({
    description: "Answers live inbound messages on its channels; at most one enabled agent per channel"
  }),
  channels: Schema.Array(Channel),
  instructions: Schema.String.annotate({ description: "The system prompt: who the agent is and how it answers" }),
  model: Schema.NullOr(Schema.String).annotate({
    description: "A model of the configured provider; null: the server's default (`LEADLINE_AI_MODEL`)"
  }),
  temperature: Schema.Number,
  max_output_tokens: Schema.Number,
  knowledge_source_ids: Schema.Array(Schema.String).annotate({
    description: "The sources it answers from; empty: every source of the account"
  }),
  max_snippets: Schema.Number.annotate({ description: "How many passages of the knowledge it is given, 0 to 10" }),
  handoff: Handoff,
  fallback_message: Schema.NullOr(Schema.String).annotate({
    description: "Said when no passage matches and `handoff.on_no_knowledge` is false (null: the handoff message)"
  }),
  version: Schema.Number.annotate({ description: 'Starts at 1, +1 on every change; the ETag is `"<version>"`' }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "Agent" })
export type Agent = typeof Agent.Type

const bounded = (field: string, min: number, max: number) =>
  Text.check(
    Schema.isMinLength(min, { message: `${field} must not be empty` }),
    Schema.isMaxLength(max, { message: `${field} must be at most ${max} characters` })
  )

const numberIn = (field: string, min: number, max: number, integer: boolean) =>
  Schema.Number.check(
    Schema.makeFilter(
      (n: number) =>
        ((!integer || Number.isInteger(n)) && n >= min && n <= max) ||
        `${field} must be ${integer ? "an integer" : "a number"} from ${min} to ${max}`
    )
  )

const Keyword = bounded("a keyword", 1, 50)

export const HandoffInput = Schema.Struct({
  keywords: Schema.optional(Schema.Array(Keyword).check(Schema.isMaxLength(50, { message: "at most 50 keywords" }))),
  message: Schema.optional(bounded("handoff.message", 1, 1000)),
  on_no_knowledge: Schema.optional(Schema.Boolean)
}).annotate({ identifier: "AgentHandoffInput" })

/** The fields a create sets and a PATCH (or a simulation's `overrides`) changes. */
export const agentFields = {
  description: Schema.optional(Schema.NullOr(bounded("description", 0, 1000))),
  enabled: Schema.optional(Schema.Boolean),
  channels: Schema.optional(Schema.Array(Channel).check(Schema.isMaxLength(1, { message: "at most 1 channel" }))),
  instructions: Schema.optional(bounded("instructions", 0, 20_000)),
  model: Schema.optional(Schema.NullOr(bounded("model", 1, 200))),
  temperature: Schema.optional(numberIn("temperature", 0, 2, false)),
  max_output_tokens: Schema.optional(numberIn("max_output_tokens", 1, 4096, true)),
  knowledge_source_ids: Schema.optional(
    Schema.Array(Text).check(Schema.isMaxLength(100, { message: "at most 100 knowledge sources" }))
  ),
  max_snippets: Schema.optional(numberIn("max_snippets", 0, 10, true)),
  handoff: Schema.optional(HandoffInput),
  fallback_message: Schema.optional(Schema.NullOr(bounded("fallback_message", 1, 1000)))
}

export const CreateAgent = Schema.Struct({ name: bounded("name", 1, 100), ...agentFields }).annotate({
  identifier: "CreateAgent"
})
export type CreateAgent = typeof CreateAgent.Type

export const UpdateAgent = Schema.Struct({ name: Schema.optional(bounded("name", 1, 100)), ...agentFields }).annotate({
  identifier: "UpdateAgent"
})
export type UpdateAgent = typeof UpdateAgent.Type

export const DeletedAgent = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotate({
  identifier: "DeletedAgent"
})

/** What a new agent is unless its create says otherwise (docs/contract-commerce-ai.md §5's example). */
export const DEFAULTS = {
  description: null,
  enabled: false,
  channels: ["whatsapp"],
  instructions: "",
  model: null,
  temperature: 0.3,
  max_output_tokens: 400,
  knowledge_source_ids: [],
  max_snippets: 4,
  handoff: { keywords: [], message: "I'll connect you with a teammate.", on_no_knowledge: true },
  fallback_message: null
} satisfies Omit<Agent, "id" | "name" | "version" | "created_at" | "updated_at">

/**
 * The agent with the given fields applied: `handoff` merges field by field (a PATCH of its
 * keywords keeps its message), `knowledge_source_ids` without repeats, in the order given.
 */
export const applied = (agent: Agent, input: UpdateAgent): Agent => {
  const { handoff, ...plain } = input
  const next: Record<string, unknown> = { ...agent }
  for (const [field, value] of Object.entries(plain)) if (value !== undefined) next[field] = value
  if (input.knowledge_source_ids !== undefined) next.knowledge_source_ids = [...new Set(input.knowledge_source_ids)]
  if (handoff !== undefined) {
    next.handoff = {
      keywords: handoff.keywords ?? agent.handoff.keywords,
      message: handoff.message ?? agent.handoff.message,
      on_no_knowledge: handoff.on_no_knowledge ?? agent.handoff.on_no_knowledge
    }
  }
  return next as Agent
}

export const nameTakenMessage = (name: string) => `An agent named ${name} already exists`
export const channelTakenMessage = (channel: string, holder: Agent) =>
  `Agent ${holder.name} (${holder.id}) is already enabled on ${channel}; disable it first`

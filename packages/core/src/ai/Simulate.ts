import { Schema } from "effect"
import { agentFields } from "../agents/Agent.ts"
import { Text } from "../Text.ts"

/** docs/contract-commerce-ai.md §6: what `POST /api/v1/ai/simulate` takes and answers. */

const MessageText = Text.check(
  Schema.isMinLength(1, { message: "must not be empty" }),
  Schema.isMaxLength(4096, { message: "must be at most 4096 characters" })
)

export const Turn = Schema.Struct({
  role: Schema.Literals(["customer", "agent"]),
  text: MessageText
}).annotate({ identifier: "SimulationTurn" })

export const SimulateInput = Schema.Struct({
  agent_id: Text.annotate({ description: "The agent to try; disabled agents too" }),
  message: MessageText.annotate({ description: "The customer's message, 1 to 4096 characters" }),
  history: Schema.optional(
    Schema.Array(Turn)
      .check(Schema.isMaxLength(20, { message: "at most 20 turns" }))
      .annotate({ description: "The conversation so far, oldest first" })
  ),
  lead_id: Schema.optional(Schema.NullOr(Text)).annotate({ description: "A lead of the account, checked" }),
  overrides: Schema.optional(
    Schema.Struct(agentFields).annotate({
      identifier: "SimulationOverrides",
      description: "Agent fields applied to this call only: try a change before saving it"
    })
  ),
  include_prompt: Schema.optional(Schema.Boolean).annotate({
    description: "Add the messages a chat model is sent (`prompt`)"
  })
}).annotate({ identifier: "SimulateInput" })
export type SimulateInput = typeof SimulateInput.Type

export const Simulation = Schema.Struct({
  agent_id: Schema.String,
  reply: Schema.Struct({
    text: Schema.String,
    kind: Schema.Literals(["answer", "handoff", "fallback"]),
    handoff_reason: Schema.NullOr(Schema.Literals(["keyword", "no_knowledge", "model"]))
  }),
  snippets: Schema.Array(
    Schema.Struct({
      chunk_id: Schema.String,
      source_id: Schema.String,
      source_title: Schema.String,
      text: Schema.String,
      score: Schema.Number
    })
  ),
  model: Schema.NullOr(
    Schema.Struct({ provider: Schema.Literals(["builtin", "openai_compatible"]), name: Schema.String })
  ).annotate({ description: "The model that answered; null when none was called (a keyword or no-knowledge handoff)" }),
  usage: Schema.Struct({ input_tokens: Schema.NullOr(Schema.Number), output_tokens: Schema.NullOr(Schema.Number) }),
  latency_ms: Schema.Number,
  sent: Schema.Literal(false).annotate({ description: "Always false: a simulation sends, stores and emits nothing" }),
  prompt: Schema.optional(
    Schema.Array(Schema.Struct({ role: Schema.Literals(["system", "user", "assistant"]), content: Schema.String }))
  )
}).annotate({ identifier: "Simulation" })
export type Simulation = typeof Simulation.Type

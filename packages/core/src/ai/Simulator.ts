import { Clock, Context, Effect, Layer } from "effect"
import { type Agent, applied } from "../agents/Agent.ts"
import * as AgentReply from "../agents/AgentReply.ts"
import { AgentsRepo } from "../agents/AgentsRepo.ts"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import {
  type AiProviderError,
  type AiProviderTimeout,
  decodeInput,
  invalidField,
  type InvalidInput,
  type PermissionDenied
} from "../Errors.ts"
import { KnowledgeRepo } from "../knowledge/KnowledgeRepo.ts"
import { LeadsRepo } from "../leads/LeadsRepo.ts"
import * as Tracing from "../Tracing.ts"
import { AiModel } from "../llm/AiModel.ts"
import { SimulateInput, type Simulation } from "./Simulate.ts"

/**
 * The AI simulation (docs/contract-commerce-ai.md §6): the agent pipeline on a message, with the agent's
 * saved configuration and this call's overrides. It sends, stores, emits and counts nothing.
 */
export class Simulator extends Context.Service<
  Simulator,
  {
    readonly simulate: (
      input: SimulateInput
    ) => Effect.Effect<
      Simulation,
      PermissionDenied | InvalidInput | AiProviderError | AiProviderTimeout,
      CurrentPrincipal
    >
  }
>()("core/Simulator") {
  static readonly layer: Layer.Layer<Simulator, never, AgentsRepo | KnowledgeRepo | LeadsRepo> = Layer.effect(
    Simulator,
    Effect.gen(function* () {
      const agents = yield* AgentsRepo
      const knowledge = yield* KnowledgeRepo
      const leads = yield* LeadsRepo
      const model = yield* AiModel
      const decode = decodeInput(SimulateInput, "simulation")

      const simulate = Effect.fnUntraced(function* (raw: SimulateInput) {
        const principal = yield* authorize("ai.use")
        const input = yield* decode(raw)
        const accountId = principal.accountId
        // References in a body that name nothing are 400s (docs/contract-commerce-ai.md §0a.1).
        const saved = yield* agents.find(accountId, input.agent_id)
        if (saved === undefined) return yield* invalidField("agent_id", "no such agent in this account")
        if (input.lead_id != null && (yield* leads.find(accountId, input.lead_id)) === undefined) {
          return yield* invalidField("lead_id", "no such lead in this account")
        }
        const agent: Agent = input.overrides === undefined ? saved : applied(saved, input.overrides)
        const started = yield* Clock.currentTimeMillis
        const outcome = yield* AgentReply.reply(accountId, agent, input.message, input.history ?? []).pipe(
          Effect.provideService(KnowledgeRepo, knowledge),
          Effect.provideService(AiModel, model)
        )
        const finished = yield* Clock.currentTimeMillis
        const completion = outcome.completion
        const simulation: Simulation = {
          agent_id: saved.id,
          reply: { text: outcome.text, kind: outcome.kind, handoff_reason: outcome.handoffReason },
          snippets: outcome.snippets.map((snippet) => ({
            chunk_id: snippet.chunkId,
            source_id: snippet.sourceId,
            source_title: snippet.sourceTitle,
            text: snippet.text,
            score: snippet.score
          })),
          model: completion === null ? null : completion.model,
          usage: {
            input_tokens: completion?.usage.inputTokens ?? null,
            output_tokens: completion?.usage.outputTokens ?? null
          },
          latency_ms: finished - started,
          sent: false
        }
        return input.include_prompt === true ? { ...simulation, prompt: outcome.prompt ?? [] } : simulation
      }, Tracing.span("Simulator.simulate"))

      return Simulator.of({ simulate })
    })
  )
}

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { SimulateInput, Simulation } from "@leadline/core/ai/Simulate"
import { Authentication } from "../Authentication.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { AiProviderError, AiProviderTimeout, Forbidden, RateLimited, ValidationError } from "../WireErrors.ts"

export class AiApi extends HttpApiGroup.make("ai")
  .add(
    HttpApiEndpoint.post("simulate", "/simulate", {
      payload: SimulateInput,
      success: Simulation,
      error: [Forbidden, ValidationError, RateLimited, AiProviderError, AiProviderTimeout]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Simulate an agent's reply",
        description:
          "Runs the agent pipeline on `message` (handoff keywords, knowledge search, fallback, the model), with the agent's saved configuration and `overrides` for this call only; disabled agents too. It sends, stores, emits and counts nothing (`sent: false`). An unknown `agent_id` or `lead_id` is a 400. The model is the server's: the builtin extractive one (quotes the best passage, `retrieval-v1`) unless an OpenAI-compatible provider is configured (502 `ai_provider_error`, 504 `ai_provider_timeout` from it). Its own per-key limit, 30 a minute unless the server sets another (429). Not a create: no `Idempotency-Key`. Needs `ai:use`."
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/ai")
  .annotateMerge(
    OpenApi.annotations({
      title: "AI",
      description: "Try an agent before it answers customers (docs/contract-commerce-ai.md §6)."
    })
  ) {}

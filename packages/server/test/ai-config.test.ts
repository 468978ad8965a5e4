import { ConfigProvider, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { KnowledgeSettings } from "@leadline/core/knowledge/Knowledge"
import * as RateLimit from "@leadline/http-adapter/RateLimit"
import * as Ai from "../src/Ai.ts"

/** Builds the AI layer from an environment and reads back what it provides. */
const build = (env: Record<string, string>) =>
  Effect.runPromiseExit(
    Effect.gen(function* () {
      return { knowledge: yield* KnowledgeSettings, simulation: yield* RateLimit.SimulationSettings }
    }).pipe(Effect.provide(Ai.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))))
  )

describe("the AI settings (docs/contract-commerce-ai.md §9)", () => {
  it("default to the builtin model, English, 1000 sources and 30 simulations a minute", async () => {
    expect(await build({})).toEqual(
      Exit.succeed({
        knowledge: { defaultLanguage: "english", maxSources: 1000 },
        simulation: { limit: 30, window: "1 minute" }
      })
    )
    const set = await build({
      LEADLINE_KNOWLEDGE_LANGUAGE: "portuguese",
      LEADLINE_KNOWLEDGE_MAX_SOURCES: "50",
      LEADLINE_AI_SIMULATE_PER_MINUTE: "5"
    })
    expect(set).toEqual(
      Exit.succeed({
        knowledge: { defaultLanguage: "portuguese", maxSources: 50 },
        simulation: { limit: 5, window: "1 minute" }
      })
    )
  })

  it("refuse to start with embeddings asked for, or an OpenAI-compatible provider without its URL and model", async () => {
    const embeddings = await build({ LEADLINE_EMBEDDINGS_PROVIDER: "openai_compatible" })
    expect(String(embeddings)).toContain("embeddings are not available in this version")
    const provider = await build({ LEADLINE_AI_PROVIDER: "openai_compatible" })
    expect(Exit.isFailure(provider)).toBe(true)
    expect(String(provider)).toContain("LEADLINE_AI_BASE_URL")
    expect(Exit.isFailure(await build({ LEADLINE_KNOWLEDGE_LANGUAGE: "klingon" }))).toBe(true)
  })
})

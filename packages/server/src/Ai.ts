import * as OpenAiCompatible from "@leadline/ai-adapter/OpenAiCompatible"
import { KnowledgeSettings } from "@leadline/core/knowledge/Knowledge"
import { LANGUAGES } from "@leadline/core/knowledge/Source"
import * as RateLimit from "@leadline/http-adapter/RateLimit"
import { Config, Effect, Layer, Schema } from "effect"

/**
 * The AI settings of a deployment (docs/contract-commerce-ai.md §9), all optional: the builtin extractive
 * model unless `LEADLINE_AI_PROVIDER=openai_compatible`, whose base URL and model are then required
 * (a start-up error names what is missing).
 */
export const AiConfig = Config.all({
  provider: Config.schema(Schema.Literals(["builtin", "openai_compatible"]), "LEADLINE_AI_PROVIDER").pipe(
    Config.withDefault("builtin" as const)
  ),
  embeddings: Config.schema(Schema.Literals(["none", "openai_compatible"]), "LEADLINE_EMBEDDINGS_PROVIDER").pipe(
    Config.withDefault("none" as const)
  ),
  language: Config.schema(Schema.Literals(LANGUAGES), "LEADLINE_KNOWLEDGE_LANGUAGE").pipe(
    Config.withDefault("english" as const)
  ),
  maxSources: Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), "LEADLINE_KNOWLEDGE_MAX_SOURCES").pipe(
    Config.withDefault(1000)
  ),
  simulationsPerMinute: Config.schema(
    Schema.Int.check(Schema.isGreaterThan(0)),
    "LEADLINE_AI_SIMULATE_PER_MINUTE"
  ).pipe(Config.withDefault(30))
})

export class EmbeddingsUnavailable extends Schema.TaggedError<EmbeddingsUnavailable>()("EmbeddingsUnavailable", {
  message: Schema.String
}) {}

/**
 * The model, the knowledge settings and the simulation's limit, for the app layer. Embeddings are
 * not built yet: asking for them is a start-up error, never a silent fallback to full-text search.
 */
export const layer = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AiConfig
    if (config.embeddings !== "none") {
      return yield* new EmbeddingsUnavailable({
        message:
          "LEADLINE_EMBEDDINGS_PROVIDER=openai_compatible: embeddings are not available in this version (they need pgvector); unset it to search with full-text search"
      })
    }
    const model = config.provider === "openai_compatible" ? OpenAiCompatible.layerConfig : Layer.empty
    yield* Effect.logInfo(
      config.provider === "openai_compatible"
        ? "AI: an OpenAI-compatible provider (LEADLINE_AI_BASE_URL)"
        : "AI: the builtin extractive model (no network); set LEADLINE_AI_PROVIDER=openai_compatible for a language model"
    )
    return Layer.mergeAll(
      model,
      Layer.succeed(KnowledgeSettings, { defaultLanguage: config.language, maxSources: config.maxSources }),
      Layer.succeed(RateLimit.SimulationSettings, { limit: config.simulationsPerMinute, window: "1 minute" })
    )
  })
)

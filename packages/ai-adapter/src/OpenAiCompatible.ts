import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { AiModel, type Completion, type CompletionRequest } from "@leadline/core/llm/AiModel"
import * as Prompt from "@leadline/core/llm/Prompt"
import { AiProviderError, AiProviderTimeout } from "@leadline/core/Errors"
import { Config, Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"

/**
 * `AiModel` over any OpenAI-compatible chat completions endpoint (docs/contract-commerce-ai.md §8): OpenAI,
 * Ollama, vLLM, llama.cpp's server, LM Studio. One `POST {baseUrl}/chat/completions` per reply, never
 * retried here (a retried completion costs twice), on effect's own HTTP client: the published
 * `@effect/ai-*` 4.x betas do not load with effect 4.0.6.
 */

export interface Options {
  /** Without a trailing slash, with the version: `https://api.openai.com/v1`, `http://localhost:11434/v1`. */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer …` when set; local servers often need none. Never logged. */
  readonly apiKey: Redacted.Redacted<string> | undefined
  /** The model when an agent names none (`LEADLINE_AI_MODEL`). */
  readonly model: string
  /** The whole exchange, connect to the last byte of the answer. */
  readonly timeoutMillis: number
}

export const DEFAULT_TIMEOUT_MILLIS = 30_000

/** The JSON body of the request: the prompt core builds, the agent's sampling settings. */
export const requestBody = (request: CompletionRequest, options: Pick<Options, "model">) => ({
  model: request.model ?? options.model,
  messages: Prompt.messages(request),
  temperature: request.temperature,
  max_tokens: request.maxOutputTokens
})

const Answer = Schema.Struct({
  model: Schema.optional(Schema.String),
  choices: Schema.Array(
    Schema.Struct({
      message: Schema.Struct({ content: Schema.String }),
      finish_reason: Schema.optional(Schema.NullOr(Schema.String))
    })
  ),
  usage: Schema.optional(
    Schema.NullOr(
      Schema.Struct({
        prompt_tokens: Schema.optional(Schema.Number),
        completion_tokens: Schema.optional(Schema.Number)
      })
    )
  )
})
const decodeAnswer = Schema.decodeUnknownOption(Schema.fromJsonString(Answer))

/** What a provider said, cut short for the log: its body may echo the prompt. */
const excerpt = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text)

export const make = (options: Options): Effect.Effect<AiModel, never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const url = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`

    const failed = (message: string) =>
      Effect.logWarning(`AI provider failed: ${message}`).pipe(
        Effect.andThen(Effect.fail(new AiProviderError({ message })))
      )

    const complete = (request: CompletionRequest): Effect.Effect<Completion, AiProviderError | AiProviderTimeout> => {
      const model = request.model ?? options.model
      const base = HttpClientRequest.post(url).pipe(
        HttpClientRequest.bodyText(JSON.stringify(requestBody(request, options)), "application/json")
      )
      const sent = options.apiKey === undefined ? base : HttpClientRequest.bearerToken(base, options.apiKey)
      return client.execute(sent).pipe(
        Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
        Effect.catch((error) => failed(`${model}: no answer (${error.reason._tag}: ${error.message})`)),
        Effect.flatMap(({ status, text }) => {
          if (status < 200 || status >= 300) return failed(`${model}: HTTP ${status}: ${excerpt(text)}`)
          const answer = decodeAnswer(text)
          if (Option.isNone(answer)) return failed(`${model}: HTTP ${status}, not a chat completion: ${excerpt(text)}`)
          const [choice] = answer.value.choices
          if (choice === undefined) return failed(`${model}: HTTP ${status}, no choices: ${excerpt(text)}`)
          return Effect.succeed<Completion>({
            text: choice.message.content,
            finishReason: choice.finish_reason ?? "stop",
            usage: {
              inputTokens: answer.value.usage?.prompt_tokens ?? null,
              outputTokens: answer.value.usage?.completion_tokens ?? null
            },
            model: { provider: "openai_compatible", name: answer.value.model ?? model }
          })
        }),
        Effect.timeoutOrElse({
          duration: options.timeoutMillis,
          orElse: () =>
            Effect.logWarning(`AI provider failed: ${model}: no answer within ${options.timeoutMillis} ms`).pipe(
              Effect.andThen(Effect.fail(new AiProviderTimeout({ timeoutMs: options.timeoutMillis })))
            )
        }),
        // Trace ids are ours: they are not sent to a third party.
        Effect.provideService(HttpClient.TracerPropagationEnabled, false),
        Effect.withSpan("AiModel.complete", { attributes: { "ai.provider": "openai_compatible", "ai.model": model } })
      )
    }
    return { complete }
  })

/** The model with its own connection pool, closed with the layer. */
export const layer = (options: Options): Layer.Layer<never> =>
  Layer.effect(AiModel, make(options)).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** `LEADLINE_AI_BASE_URL`, `LEADLINE_AI_API_KEY`, `LEADLINE_AI_MODEL`, `LEADLINE_AI_TIMEOUT_MS` (docs/contract-commerce-ai.md §9). */
export const config: Config.Config<Options> = Config.all({
  baseUrl: Config.URL("LEADLINE_AI_BASE_URL").pipe(Config.map((url) => url.href.replace(/\/+$/, ""))),
  apiKey: Config.option(Config.Redacted("LEADLINE_AI_API_KEY")).pipe(
    Config.map((key) => (Option.isSome(key) && Redacted.value(key.value).length > 0 ? key.value : undefined))
  ),
  model: Config.schema(Schema.NonEmptyString, "LEADLINE_AI_MODEL"),
  timeoutMillis: Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), "LEADLINE_AI_TIMEOUT_MS").pipe(
    Config.withDefault(DEFAULT_TIMEOUT_MILLIS)
  )
})

/** `layer` with its options from the environment; a missing or malformed setting fails the layer. */
export const layerConfig: Layer.Layer<never, Config.ConfigError> = Layer.unwrap(Effect.map(config, layer))

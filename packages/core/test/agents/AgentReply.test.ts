import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { type Agent, DEFAULTS } from "../../src/agents/Agent.ts"
import * as AgentReply from "../../src/agents/AgentReply.ts"
import { AiModel, type CompletionRequest } from "../../src/llm/AiModel.ts"
import { KnowledgeRepo } from "../../src/knowledge/KnowledgeRepo.ts"

const agent: Agent = {
  id: "agt_1",
  name: "Ana",
  ...DEFAULTS,
  instructions: "You are Ana.",
  handoff: { keywords: ["human", "atendente", "c++"], message: "A teammate will answer.", on_no_knowledge: true },
  version: 1,
  created_at: "2026-11-24T00:00:00.000Z",
  updated_at: "2026-11-24T00:00:00.000Z"
}

const hit = {
  chunk: { id: "kc_1", source_id: "ks_1", position: 0, heading: null, text: "We ship in 2 days." },
  sourceTitle: "Shipping",
  allTerms: true,
  rank: 0.5,
  snippet: "We <b>ship</b> in 2 days."
}

/** Runs the pipeline over a fixed search result and a model that records what it was asked. */
const run = (message: string, options: { hits?: ReadonlyArray<typeof hit>; answer?: string; of?: Agent } = {}) => {
  const asked: Array<CompletionRequest> = []
  const searched: Array<unknown> = []
  const knowledge = Layer.succeed(KnowledgeRepo)({
    search: (_account: string, request: unknown) =>
      Effect.sync(() => {
        searched.push(request)
        return options.hits ?? [hit]
      })
  } as never)
  const model = Layer.succeed(AiModel)({
    complete: (request) =>
      Effect.sync(() => {
        asked.push(request)
        return {
          text: options.answer ?? "We ship in 2 days.",
          finishReason: "stop",
          usage: { inputTokens: 10, outputTokens: 5 },
          model: { provider: "openai_compatible" as const, name: "fake" }
        }
      })
  })
  return Effect.runPromise(
    AgentReply.reply("acc", options.of ?? agent, message, [{ role: "customer", text: "Oi" }]).pipe(
      Effect.provide(Layer.merge(knowledge, model))
    )
  ).then((outcome) => ({ outcome, asked, searched }))
}

describe("the agent pipeline", () => {
  it("matches handoff keywords as whole words in any case, symbols included", () => {
    const keywords = agent.handoff.keywords
    expect(AgentReply.keywordIn("Quero um ATENDENTE!", keywords)).toBe("atendente")
    expect(AgentReply.keywordIn("a humane answer", keywords)).toBeUndefined()
    expect(AgentReply.keywordIn("do you know C++?", keywords)).toBe("c++")
    expect(AgentReply.keywordIn("human", [])).toBeUndefined()
  })

  it("hands off on a keyword before searching or calling the model", async () => {
    const { outcome, asked, searched } = await run("get me a human")
    expect([outcome.kind, outcome.handoffReason, outcome.text, outcome.completion]).toEqual([
      "handoff",
      "keyword",
      "A teammate will answer.",
      null
    ])
    expect([asked, searched]).toEqual([[], []])
  })

  it("searches the agent's sources for the message and asks the model with the passages, history first", async () => {
    const { outcome, asked, searched } = await run("when do you ship?", {
      of: { ...agent, knowledge_source_ids: ["ks_1"], max_snippets: 3 }
    })
    expect(searched).toEqual([{ query: "when do you ship?", limit: 3, sourceIds: ["ks_1"] }])
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({
      model: null,
      temperature: 0.3,
      maxOutputTokens: 400,
      messages: [
        { role: "user", content: "Oi" },
        { role: "user", content: "when do you ship?" }
      ]
    })
    expect(asked[0]!.snippets.map((s) => [s.chunkId, s.headline])).toEqual([["kc_1", "We <b>ship</b> in 2 days."]])
    expect([outcome.kind, outcome.text, outcome.handoffReason]).toEqual(["answer", "We ship in 2 days.", null])
  })

  it("hands off when the model says HANDOFF, and when nothing matches; the fallback when told not to", async () => {
    expect((await run("refund?", { answer: "HANDOFF" })).outcome).toMatchObject({
      kind: "handoff",
      handoffReason: "model"
    })
    const none = await run("zzz", { hits: [] })
    expect([none.outcome.kind, none.outcome.handoffReason, none.asked]).toEqual(["handoff", "no_knowledge", []])
    const fallback = await run("zzz", {
      hits: [],
      of: { ...agent, handoff: { ...agent.handoff, on_no_knowledge: false }, fallback_message: "No idea, sorry." }
    })
    expect([fallback.outcome.kind, fallback.outcome.text]).toEqual(["fallback", "No idea, sorry."])
  })

  it("trims a long answer to the WhatsApp limit", async () => {
    const { outcome } = await run("tell me everything", { answer: "x".repeat(5000) })
    expect(outcome.text.length).toBe(AgentReply.MAX_REPLY_CHARS)
  })
})

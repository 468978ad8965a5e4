import { beforeAll, describe, expect, it } from "vitest"
import { makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden } from "../internal/wire.ts"
import { createSource } from "../knowledge/KnowledgeResource.ts"
import type { ContractContext } from "../Slice.ts"
import { createAgent, SIMULATE } from "./AgentsResource.ts"

const POLICY = `# Shipping

Orders placed before noon ship the same day. Delivery in São Paulo takes 1 to 2 business days.

# Payment

We accept Pix, credit cards and cash on delivery.`

/** The AI simulation with the builtin model (docs/contract-commerce-ai.md §6): quotes, handoffs, overrides, scopes. */
export const contract = (context: ContractContext) => {
  describe("AI simulation", () => {
    const owner = () => context.acme.ownerKey
    const simulate = (json: unknown, key = owner()) => call(context.target, "POST", SIMULATE, { auth: key, json })
    let agent: { id: string }
    let source: { id: string; title: string }
    beforeAll(async () => {
      source = await createSource(context.target, owner(), { title: "Policies", content: POLICY })
      agent = await createAgent(context.target, owner(), {
        knowledge_source_ids: [source.id],
        handoff: { keywords: ["human", "atendente"] }
      })
    })

    it("answers by quoting the passage that matches, with the builtin model, sending nothing", async () => {
      const reply = await simulate({ agent_id: agent.id, message: "Which payment methods do you accept?" })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({
        agent_id: agent.id,
        reply: { kind: "answer", handoff_reason: null },
        model: { provider: "builtin", name: "retrieval-v1" },
        usage: { input_tokens: null, output_tokens: null },
        sent: false
      })
      expect(reply.body.reply.text).toContain("accept Pix, credit cards and cash on delivery")
      // Quoted: the reply, but for the ellipses where it cuts, is a passage of the source.
      for (const part of reply.body.reply.text.split("…").filter((part: string) => part.trim().length > 0)) {
        expect(POLICY).toContain(part.trim())
      }
      expect(reply.body.snippets[0]).toMatchObject({ source_id: source.id, source_title: "Policies" })
      expect(reply.body.snippets[0].text).toContain("Section: Payment")
      expect(reply.body).not.toHaveProperty("prompt")
    })

    it("hands off on a keyword, as a whole word in any case, without searching or calling a model", async () => {
      const reply = await simulate({ agent_id: agent.id, message: "Quero falar com um ATENDENTE, por favor" })
      expect([reply.status, reply.body.reply, reply.body.snippets, reply.body.model], reply.text).toEqual([
        200,
        { text: "I'll connect you with a teammate.", kind: "handoff", handoff_reason: "keyword" },
        [],
        null
      ])
      // "humane" holds "human" but not as a word.
      const word = await simulate({ agent_id: agent.id, message: "Is your packaging humane for shipping?" })
      expect(word.body.reply.kind).toBe("answer")
    })

    it("hands off when no passage matches, or says the fallback when told not to", async () => {
      const none = await simulate({ agent_id: agent.id, message: "zzyzx" })
      expect(none.body.reply).toEqual({
        text: "I'll connect you with a teammate.",
        kind: "handoff",
        handoff_reason: "no_knowledge"
      })
      const fallback = await simulate({
        agent_id: agent.id,
        message: "zzyzx",
        overrides: { handoff: { on_no_knowledge: false }, fallback_message: "Sorry, I don't know that one." }
      })
      expect(fallback.body.reply).toEqual({
        text: "Sorry, I don't know that one.",
        kind: "fallback",
        handoff_reason: null
      })
    })

    it("shows the prompt with the overrides applied: rules apart, passages in one delimited block, the message last", async () => {
      const reply = await simulate({
        agent_id: agent.id,
        message: "When do orders ship?",
        history: [
          { role: "customer", text: "Oi" },
          { role: "agent", text: "Olá! Como posso ajudar?" }
        ],
        overrides: { instructions: "You are Bia." },
        include_prompt: true
      })
      expect(reply.status, reply.text).toBe(200)
      const prompt = reply.body.prompt as ReadonlyArray<{ role: string; content: string }>
      expect(prompt.map((message) => message.role)).toEqual(["system", "user", "assistant", "user"])
      expect(prompt[0]!.content.startsWith("You are Bia.\n\nRules:")).toBe(true)
      expect(prompt[0]!.content).toContain("<knowledge>\n[1] Policies\nSection: Shipping")
      expect(prompt[0]!.content.endsWith("</knowledge>")).toBe(true)
      expect(prompt.slice(1).map((message) => message.content)).toEqual([
        "Oi",
        "Olá! Como posso ajudar?",
        "When do orders ship?"
      ])
    })

    it("refuses an unknown or foreign agent and lead with 400, and too long a message", async () => {
      const theirs = await createAgent(context.target, context.other.ownerKey)
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ agent_id: theirs.id, message: "hi" }, "agent_id"],
        [{ agent_id: "agt_nope", message: "hi" }, "agent_id"],
        [{ agent_id: agent.id, message: "hi", lead_id: "lead_nope" }, "lead_id"],
        [{ agent_id: agent.id, message: "x".repeat(4097) }, "message"],
        [{ agent_id: agent.id, message: "" }, "message"],
        [{ agent_id: agent.id, message: "hi", overrides: { temperature: 3 } }, "overrides.temperature"]
      ]
      for (const [json, path] of cases) {
        const reply = await simulate(json)
        expect([reply.status, reply.body.code], `${path}: ${reply.text}`).toEqual([400, "validation_error"])
        expect(reply.body.details.map((d: { path: string }) => d.path)).toContain(path)
      }
    })

    it("needs ai:use, which is enough alone; agents:write is not", async () => {
      const aiUse = (await makeKey(context.target, context.acme.accountId, { scopes: ["ai:use"] })).apiKey
      const agentsWrite = (await makeKey(context.target, context.acme.accountId, { scopes: ["agents:write"] })).apiKey
      const allowed = await simulate({ agent_id: agent.id, message: "Do you take Pix?" }, aiUse)
      expect(allowed.status, allowed.text).toBe(200)
      const refused = await simulate({ agent_id: agent.id, message: "Do you take Pix?" }, agentsWrite)
      expect([refused.status, refused.body]).toEqual([403, forbidden("ai:use")])
    })
  })
}

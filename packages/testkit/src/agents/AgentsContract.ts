import { beforeAll, describe, expect, it } from "vitest"
import { makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden, notFound } from "../internal/wire.ts"
import { createSource } from "../knowledge/KnowledgeResource.ts"
import type { ContractContext } from "../Slice.ts"
import { AGENT_KEYS, createAgent, PATH, readAgent } from "./AgentsResource.ts"

/** Agents (docs/contract-commerce-ai.md §5): defaults, limits, one enabled per channel, versions, sources of the account. */
export const contract = (context: ContractContext) => {
  describe("agents", () => {
    const owner = () => context.acme.ownerKey
    const patch = (id: string, json: unknown, headers: Record<string, string> = {}, key = owner()) =>
      call(context.target, "PATCH", `${PATH}/${id}`, { auth: key, json, headers })
    let writer: string
    beforeAll(async () => {
      writer = (await makeKey(context.target, context.acme.accountId, { scopes: ["agents:write"] })).apiKey
    })

    // Agents of other tests may be enabled: a test that enables one frees the channel first and after.

    const disableAll = async () => {
      const all = await call(context.target, "GET", `${PATH}?limit=100`, { auth: owner() })
      for (const agent of all.body.agents) {
        if (agent.enabled) expect((await patch(agent.id, { enabled: false })).status).toBe(200)
      }
    }

    it("creates an agent with the contract's defaults, version 1 and its ETag", async () => {
      const reply = await call(context.target, "POST", PATH, { auth: writer, json: { name: "Ana" } })
      expect(reply.status, reply.text).toBe(201)
      expect(Object.keys(reply.body).sort()).toEqual(AGENT_KEYS)
      expect(reply.body).toMatchObject({
        name: "Ana",
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
        fallback_message: null,
        version: 1
      })
      expect(reply.body.id).toMatch(/^agt_[0-9a-z]{26}$/)
      expect(reply.headers.get("etag")).toBe('"1"')
      const again = await call(context.target, "POST", PATH, { auth: writer, json: { name: "Ana" } })
      expect([again.status, again.body]).toEqual([
        409,
        { error: "An agent named Ana already exists", code: "conflict" }
      ])
    })

    it("refuses out-of-range settings and a knowledge source of another account, with details", async () => {
      const theirs = await createSource(context.target, context.other.ownerKey)
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ temperature: 2.5 }, "temperature"],
        [{ max_output_tokens: 0 }, "max_output_tokens"],
        [{ max_output_tokens: 1.5 }, "max_output_tokens"],
        [{ max_snippets: 11 }, "max_snippets"],
        [{ channels: ["telegram"] }, "channels.0"],
        [{ handoff: { keywords: [""] } }, "handoff.keywords.0"],
        [{ instructions: "x".repeat(20_001) }, "instructions"],
        [{ knowledge_source_ids: [theirs.id] }, "knowledge_source_ids.0"]
      ]
      for (const [fields, path] of cases) {
        const reply = await call(context.target, "POST", PATH, {
          auth: owner(),
          json: { name: `Bad ${crypto.randomUUID().slice(0, 8)}`, ...fields }
        })
        expect([reply.status, reply.body.code], `${path}: ${reply.text}`).toEqual([400, "validation_error"])
        expect(reply.body.details.map((d: { path: string }) => d.path)).toContain(path)
      }
    })

    it("lets one agent be enabled on WhatsApp at a time", async () => {
      await disableAll()
      const first = await createAgent(context.target, owner(), { enabled: true })
      const second = await createAgent(context.target, owner())
      const clash = await patch(second.id, { enabled: true })
      expect([clash.status, clash.body]).toEqual([
        409,
        {
          error: `Agent ${first.name} (${first.id}) is already enabled on whatsapp; disable it first`,
          code: "conflict"
        }
      ])
      expect((await readAgent(context.target, owner(), second.id)).enabled).toBe(false)
      expect((await patch(first.id, { enabled: false })).status).toBe(200)
      const now = await patch(second.id, { enabled: true })
      expect([now.status, now.body.enabled, now.body.version]).toEqual([200, true, 2])
      await disableAll()
    })

    it("versions each change, merges handoff field by field, keeps a PATCH that changes nothing, and honours If-Match", async () => {
      const agent = await createAgent(context.target, owner(), { handoff: { keywords: ["human"] } })
      const same = await patch(agent.id, { temperature: agent.temperature })
      expect([same.status, same.body]).toEqual([200, agent])
      const changed = await patch(
        agent.id,
        { handoff: { message: "A person will answer soon." } },
        { "if-match": '"1"' }
      )
      expect([changed.status, changed.headers.get("etag")], changed.text).toEqual([200, '"2"'])
      expect(changed.body.handoff).toEqual({
        keywords: ["human"],
        message: "A person will answer soon.",
        on_no_knowledge: true
      })
      const stale = await patch(agent.id, { temperature: 1 }, { "if-match": '"1"' })
      expect([stale.status, stale.body]).toEqual([
        412,
        { error: 'If-Match does not match the current version (ETag "2")', code: "precondition_failed" }
      ])
      expect((await readAgent(context.target, owner(), agent.id)).temperature).toBe(0.3)
    })

    it("drops a deleted knowledge source from the agents that named it", async () => {
      const kept = await createSource(context.target, owner())
      const dropped = await createSource(context.target, owner())
      const agent = await createAgent(context.target, owner(), { knowledge_source_ids: [kept.id, dropped.id] })
      expect(
        (await call(context.target, "DELETE", `/api/v1/knowledge/sources/${dropped.id}`, { auth: owner() })).status
      ).toBe(200)
      const after = await readAgent(context.target, owner(), agent.id)
      expect([after.knowledge_source_ids, after.version]).toEqual([[kept.id], 2])
    })

    it("deletes with a full-access key only; another account's agent is 404", async () => {
      const agent = await createAgent(context.target, owner())
      const scoped = await call(context.target, "DELETE", `${PATH}/${agent.id}`, { auth: writer })
      expect([scoped.status, scoped.body]).toEqual([403, forbidden("full access")])
      const elsewhere = await call(context.target, "GET", `${PATH}/${agent.id}`, { auth: context.other.ownerKey })
      expect([elsewhere.status, elsewhere.body]).toEqual([404, notFound("agent", agent.id)])
      const removed = await call(context.target, "DELETE", `${PATH}/${agent.id}`, { auth: owner() })
      expect([removed.status, removed.body]).toEqual([200, { id: agent.id, deleted: true }])
      expect((await call(context.target, "GET", `${PATH}/${agent.id}`, { auth: owner() })).status).toBe(404)
    })
  })
}

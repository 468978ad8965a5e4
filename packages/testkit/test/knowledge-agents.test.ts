import { describe, expect, it } from "vitest"
import { createAgent } from "../src/agents/AgentsResource.ts"
import { call } from "../src/Http.ts"
import { sleep } from "../src/internal/wire.ts"
import { createSource } from "../src/knowledge/KnowledgeResource.ts"
import * as Wirings from "../src/Wirings.ts"

/**
 * Knowledge and agents end to end on each wiring (docs/contract-commerce-ai.md §4–6): their events reach a
 * receiver on a real socket, signed, once each, with `previous_attributes` and `deleted: true`; a
 * simulation delivers nothing, stores no message and counts nothing.
 */
for (const [name, wiring] of Wirings.wirings) {
  describe(`knowledge and agents ${name}`, () => {
    const stage = Wirings.stage(wiring)
    const owner = () => stage.account.ownerKey

    const subscribe = async (path: string, events: ReadonlyArray<string>) => {
      const endpoint = stage.receiver.endpoint(`/${path}-${name.replace(" ", "-")}`)
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: owner(),
        json: { url: endpoint.url, events }
      })
      expect(registered.status, registered.text).toBe(201)
      endpoint.setSecret(registered.body.secret)
      return endpoint
    }

    it("delivers knowledge.updated and agent.config_changed for every change, signed, once each", async () => {
      const endpoint = await subscribe("knowledge", ["knowledge.updated", "agent.config_changed"])
      const source = await createSource(stage.server, owner(), { kind: "text", content: "Open from 7 am." })
      const renamed = await call(stage.server, "PATCH", `/api/v1/knowledge/sources/${source.id}`, {
        auth: owner(),
        json: { title: "Opening hours" }
      })
      expect(renamed.status, renamed.text).toBe(200)
      const agent = await createAgent(stage.server, owner(), { knowledge_source_ids: [source.id] })
      const tuned = await call(stage.server, "PATCH", `/api/v1/agents/${agent.id}`, {
        auth: owner(),
        json: { temperature: 0.5 }
      })
      expect(tuned.status, tuned.text).toBe(200)
      // Deleting the source drops it from the agent: one knowledge.updated, one agent.config_changed.
      expect(
        (await call(stage.server, "DELETE", `/api/v1/knowledge/sources/${source.id}`, { auth: owner() })).status
      ).toBe(200)
      const after = await call(stage.server, "GET", `/api/v1/agents/${agent.id}`, { auth: owner() })
      expect((await call(stage.server, "DELETE", `/api/v1/agents/${agent.id}`, { auth: owner() })).status).toBe(200)

      const delivered = await endpoint.waitFor(7, 10_000)
      await sleep(500)
      expect(endpoint.requests()).toHaveLength(7)
      for (const request of delivered) expect(request.verified).toEqual({ service: true, standard: true })
      const events = delivered.map((request) => JSON.parse(request.body)).sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(new Set(events.map((event) => event.id)).size).toBe(7)
      expect(events.map((event) => [event.type, event.previous_attributes, event.data.deleted])).toEqual([
        ["knowledge.updated", undefined, undefined],
        ["knowledge.updated", { title: source.title }, undefined],
        ["agent.config_changed", undefined, undefined],
        ["agent.config_changed", { temperature: 0.3 }, undefined],
        ["knowledge.updated", undefined, true],
        ["agent.config_changed", { knowledge_source_ids: [source.id] }, undefined],
        ["agent.config_changed", undefined, true]
      ])
      expect(events[0].data).toEqual(source)
      expect(events[1].data).toEqual(renamed.body)
      expect(events[2].data).toEqual(agent)
      expect(events[3].data).toEqual(tuned.body)
      expect(events[5].data).toEqual(after.body)
      expect(events[6].data).toEqual({ ...after.body, deleted: true })
    })

    it("sends, stores, emits and counts nothing when it simulates", async () => {
      const source = await createSource(stage.server, owner(), {
        kind: "text",
        content: "We deliver in Campinas on Saturdays."
      })
      const agent = await createAgent(stage.server, owner(), {
        knowledge_source_ids: [source.id],
        handoff: { keywords: ["human"] }
      })
      const endpoint = await subscribe("simulation", [
        "message.sent",
        "message.received",
        "agent.config_changed",
        "knowledge.updated"
      ])
      const usage = async () => (await call(stage.server, "GET", "/api/usage", { auth: owner() })).body
      const conversations = async () =>
        (await call(stage.server, "GET", "/api/v1/conversations", { auth: owner() })).body.meta.total
      const before = [await usage(), await conversations()]
      for (const message of ["Do you deliver to Campinas?", "I want a human", "zzyzx"]) {
        const reply = await call(stage.server, "POST", "/api/v1/ai/simulate", {
          auth: owner(),
          json: { agent_id: agent.id, message }
        })
        expect([reply.status, reply.body.sent], reply.text).toEqual([200, false])
      }
      await sleep(1_000)
      expect(endpoint.requests()).toEqual([])
      expect([await usage(), await conversations()]).toEqual(before)
    })
  })
}

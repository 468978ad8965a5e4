import { expect } from "vitest"
import { call } from "../Http.ts"
import { listAll, neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

/** The fields of an agent on the wire, sorted (docs/contract-commerce-ai.md §5). */
export const AGENT_KEYS = [
  "channels",
  "created_at",
  "description",
  "enabled",
  "fallback_message",
  "handoff",
  "id",
  "instructions",
  "knowledge_source_ids",
  "max_output_tokens",
  "max_snippets",
  "model",
  "name",
  "temperature",
  "updated_at",
  "version"
]

export const PATH = "/api/v1/agents"
export const SIMULATE = "/api/v1/ai/simulate"

export const agentBody = (fields: Record<string, unknown> = {}) => ({
  name: `Ana ${crypto.randomUUID().slice(0, 8)}`,
  instructions: "You are Ana, the assistant of Padaria Boa. Be brief and friendly.",
  ...fields
})

/** POST /api/v1/agents, expecting 201. */
export const createAgent = async (target: Target, key: string, fields: Record<string, unknown> = {}) => {
  const reply = await call(target, "POST", PATH, { auth: key, json: agentBody(fields) })
  expect(reply.status, reply.text).toBe(201)
  return reply.body as Record<string, any> & { id: string; name: string; version: number }
}

export const readAgent = async (target: Target, key: string, id: string) => {
  const reply = await call(target, "GET", `${PATH}/${id}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Record<string, any>
}

const isolation: Resource.Isolation = {
  noun: "agent",
  make: async ({ target }, key) => (await createAgent(target, key)).id,
  read: ({ target }, key, id) => readAgent(target, key, id),
  unknownId: () => neverIssued("agt")
}

const at = (id: string) => ({ path: `${PATH}/${id}` })

export const resource: Resource.Resource = {
  name: "agents",
  routes: [
    {
      method: "GET",
      path: PATH,
      needs: ["agents:read", "agents:write"],
      succeeds: 200,
      lists: "agents",
      request: async () => ({ path: PATH })
    },
    {
      method: "POST",
      path: PATH,
      needs: ["agents:write"],
      succeeds: 201,
      request: async ({ target }, account) => {
        const body = agentBody()
        return {
          path: PATH,
          json: body,
          unchanged: async () => {
            const agents = await listAll(target, account.ownerKey, PATH, "agents")
            expect(agents.map((a: { name: string }) => a.name)).not.toContain(body.name)
          }
        }
      }
    },
    {
      method: "GET",
      path: `${PATH}/{id}`,
      needs: ["agents:read", "agents:write"],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      method: "PATCH",
      path: `${PATH}/{id}`,
      needs: ["agents:write"],
      succeeds: 200,
      addresses: (id) => ({ ...at(id), json: { temperature: 1 } }),
      request: Resource.aimedAt(isolation, (id) => ({ ...at(id), json: { temperature: 0.7 } }))
    },
    {
      method: "DELETE",
      path: `${PATH}/{id}`,
      needs: "full access",
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      // The agent is named in the body: another account's is a 400 (the simulation contract tests it).
      method: "POST",
      path: SIMULATE,
      needs: ["ai:use"],
      succeeds: 200,
      request: async ({ target }, account) => ({
        path: SIMULATE,
        json: { agent_id: (await createAgent(target, account.ownerKey)).id, message: "Do you deliver on Sundays?" }
      })
    }
  ],
  isolation,
  ledger: {
    tables: [
      {
        name: "agents",
        account: "account_id",
        rows: Resource.perOperation({ [`POST ${PATH}`]: 1, [`DELETE ${PATH}/{id}`]: -1 })
      },
      {
        name: "agent_jobs",
        account: "account_id",
        rows: Resource.uncounted("one per inbound text message while an agent is enabled, made by WhatsApp's webhook")
      }
    ],
    ids: {
      field: "id",
      create: `POST ${PATH}`,
      update: `PATCH ${PATH}/{id}`,
      remove: `DELETE ${PATH}/{id}`,
      list: { path: PATH, field: "agents" },
      parameters: [`${PATH}/{id} id`]
    },
    emits: {
      [`POST ${PATH}`]: "agent.config_changed",
      [`DELETE ${PATH}/{id}`]: "agent.config_changed",
      [`PATCH ${PATH}/{id}`]: (after, before) =>
        before !== undefined && after.version !== before.version ? ["agent.config_changed"] : []
    }
  }
}

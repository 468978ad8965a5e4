import type { Admits } from "../Slice.ts"

/**
 * The keys each agents route admits (docs/contract-commerce-ai.md §1): `agents:read` reads, `agents:write`
 * also creates and changes; deleting needs a full-access key (no scope grants `agents.delete`).
 */
const reads = ["agents:read", "agents:write", "all 16 scopes", "full access"] as const
const writes = ["agents:write", "all 16 scopes", "full access"] as const

export const admits: Admits = {
  "GET /api/v1/agents": reads,
  "POST /api/v1/agents": writes,
  "GET /api/v1/agents/{id}": reads,
  "PATCH /api/v1/agents/{id}": writes,
  "DELETE /api/v1/agents/{id}": ["full access"],
  // ai:use alone is enough: a key that may simulate may read the agent it simulates.
  "POST /api/v1/ai/simulate": ["ai:use", "all 16 scopes", "full access"]
}

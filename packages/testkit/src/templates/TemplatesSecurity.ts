import type { Admits } from "../Slice.ts"

/**
 * The keys each templates route admits (docs/contract-messaging.md §8.7): read as channels are, by a
 * key that reads conversations or sends messages; synced, created and deleted with full access only.
 */
const reads = ["conversations:read", "messages:send", "all 16 scopes", "full access"] as const

export const admits: Admits = {
  "GET /api/v1/templates": reads,
  "POST /api/v1/templates": ["full access"],
  "POST /api/v1/template-syncs": ["full access"],
  "GET /api/v1/templates/{id}": reads,
  "DELETE /api/v1/templates/{id}": ["full access"]
}

import type { Admits } from "../Slice.ts"

/**
 * The keys each channels route admits, as docs/contract-messaging.md §0a.8 has them: a key that
 * reads conversations or sends messages can list its channels; connecting and changing one
 * needs full access.
 */
const reads = ["conversations:read", "messages:send", "all 16 scopes", "full access"] as const

export const admits: Admits = {
  "GET /api/v1/channels": reads,
  "POST /api/v1/channels": ["full access"],
  "GET /api/v1/channels/{id}": reads,
  "PATCH /api/v1/channels/{id}": ["full access"]
}

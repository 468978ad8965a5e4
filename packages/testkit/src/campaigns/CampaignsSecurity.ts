import type { Admits } from "../Slice.ts"

/**
 * The keys each campaigns route admits, as docs/contract-messaging.md §8.3 and §11 have them: any
 * campaigns scope reads, `campaigns:write` writes drafts and cannot queue, `campaigns:send`
 * queues and cancels and cannot write.
 */
const reads = ["campaigns:read", "campaigns:write", "campaigns:send", "all 16 scopes", "full access"] as const
const writes = ["campaigns:write", "all 16 scopes", "full access"] as const
const sends = ["campaigns:send", "all 16 scopes", "full access"] as const

export const admits: Admits = {
  "GET /api/v1/campaigns": reads,
  "POST /api/v1/campaigns": writes,
  "GET /api/v1/campaigns/{id}": reads,
  "PATCH /api/v1/campaigns/{id}": writes,
  "DELETE /api/v1/campaigns/{id}": writes,
  "POST /api/v1/campaigns/{id}/queue": sends,
  "POST /api/v1/campaigns/{id}/cancel": sends,
  "GET /api/v1/campaigns/{id}/recipients": reads
}

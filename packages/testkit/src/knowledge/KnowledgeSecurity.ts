import type { Admits } from "../Slice.ts"

/** The keys each knowledge route admits (docs/contract-commerce-ai.md §1): `knowledge:read` reads, `knowledge:write` also writes. */
const reads = ["knowledge:read", "knowledge:write", "all 16 scopes", "full access"] as const
const writes = ["knowledge:write", "all 16 scopes", "full access"] as const

export const admits: Admits = {
  "GET /api/v1/knowledge/sources": reads,
  "POST /api/v1/knowledge/sources": writes,
  "GET /api/v1/knowledge/search": reads,
  "GET /api/v1/knowledge/sources/{id}": reads,
  "GET /api/v1/knowledge/sources/{id}/chunks": reads,
  "POST /api/v1/knowledge/sources/{id}/refresh": writes,
  "PATCH /api/v1/knowledge/sources/{id}": writes,
  "DELETE /api/v1/knowledge/sources/{id}": writes
}

import type { Admits } from "../Slice.ts"

/** The keys each analytics route admits (docs/contract-commerce-ai.md §7): `analytics:read`, as `/api/usage`. */
const reads = ["analytics:read", "all 16 scopes", "full access"] as const

export const admits: Admits = {
  "GET /api/v1/analytics/summary": reads,
  "GET /api/v1/analytics/timeseries": reads
}

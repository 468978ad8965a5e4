import type { Admits } from "../Slice.ts"

/**
 * The keys each orders route admits (docs/contract-commerce-ai.md §1): `orders:read` reads, `orders:write` reads and
 * writes; the order-notice setting reads as orders do and changes with a full-access key only.
 */
const reads = ["orders:read", "orders:write", "all 16 scopes", "full access"] as const
const writes = ["orders:write", "all 16 scopes", "full access"] as const

export const admits: Admits = {
  "GET /api/v1/orders": reads,
  "POST /api/v1/orders": writes,
  "GET /api/v1/orders/{id}": reads,
  "PATCH /api/v1/orders/{id}": writes,
  "GET /api/v1/settings/order-notifications": reads,
  "PATCH /api/v1/settings/order-notifications": ["full access"]
}

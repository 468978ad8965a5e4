import type { Admits } from "../Slice.ts"

/**
 * The keys each catalogue route admits (docs/contract-commerce-ai.md §1): `catalogue:read` reads, and
 * only a full-access key writes: no scope grants `catalogue.manage`, not even all 16 together.
 */
const reads = ["catalogue:read", "all 16 scopes", "full access"] as const
const manages = ["full access"] as const

export const admits: Admits = {
  "GET /api/v1/catalogue/products": reads,
  "POST /api/v1/catalogue/products": manages,
  "GET /api/v1/catalogue/products/{id}": reads,
  "PATCH /api/v1/catalogue/products/{id}": manages,
  "DELETE /api/v1/catalogue/products/{id}": manages
}

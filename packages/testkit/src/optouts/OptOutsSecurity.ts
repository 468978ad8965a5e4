import type { Admits } from "../Slice.ts"

/** The opt-out setting reads as leads do (docs/contract-messaging.md §8.6) and changes with a full-access key only. */
export const admits: Admits = {
  "GET /api/v1/settings/opt-outs": ["leads:read", "leads:write", "all 16 scopes", "full access"],
  "PATCH /api/v1/settings/opt-outs": ["full access"]
}

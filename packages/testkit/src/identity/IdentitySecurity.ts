import type { Admits } from "../Slice.ts"

/** The keys each identity route admits, as the contract has them: any key reads itself and its account's users, the usage takes analytics:read. */
export const admits: Admits = {
  "GET /api/me": "every key set",
  "GET /api/usage": ["analytics:read", "all 16 scopes", "full access"],
  "GET /api/users": "every key set"
}

import type { Admits } from "../Slice.ts"

/** The event log and its stream admit every key that reads a resource with events (docs/contract.md, "Events", "Stream"): it sees those. */
export const admits: Admits = {
  "GET /api/v1/events": [
    "leads:read",
    "leads:write",
    "conversations:read",
    "messages:send",
    "campaigns:read",
    "campaigns:write",
    "campaigns:send",
    "orders:read",
    "orders:write",
    "knowledge:read",
    "knowledge:write",
    "agents:read",
    "agents:write",
    "all 16 scopes",
    "full access"
  ],
  "GET /api/v1/stream": [
    "leads:read",
    "leads:write",
    "conversations:read",
    "messages:send",
    "campaigns:read",
    "campaigns:write",
    "campaigns:send",
    "orders:read",
    "orders:write",
    "knowledge:read",
    "knowledge:write",
    "agents:read",
    "agents:write",
    "all 16 scopes",
    "full access"
  ]
}

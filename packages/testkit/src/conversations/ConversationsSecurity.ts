import type { Admits } from "../Slice.ts"

/**
 * conversations:read or messages:send read conversations and messages; messages:send sends, reacts
 * and marks read (docs/contract-messaging.md §11).
 */
const reads = ["conversations:read", "messages:send", "all 16 scopes", "full access"] as const

export const admits: Admits = {
  "GET /api/v1/conversations": reads,
  "GET /api/v1/conversations/{id}": reads,
  "PATCH /api/v1/conversations/{id}": ["full access"],
  "GET /api/v1/conversations/{id}/messages": reads,
  "GET /api/v1/messages/{id}": reads,
  "GET /api/v1/messages/{id}/media": reads,
  "POST /api/v1/conversations/{id}/messages": ["messages:send", "all 16 scopes", "full access"],
  "POST /api/v1/messages": ["messages:send", "all 16 scopes", "full access"],
  "POST /api/v1/messages/{id}/reactions": ["messages:send", "all 16 scopes", "full access"],
  "POST /api/v1/conversations/{id}/read": ["messages:send", "all 16 scopes", "full access"],
  "POST /api/v1/media": ["messages:send", "all 16 scopes", "full access"],
  "GET /api/v1/media/{id}": reads
}

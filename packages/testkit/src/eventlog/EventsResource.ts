import { expect } from "vitest"
import { call } from "../Http.ts"
import { createLead, readLead, unknownLeadId } from "../leads/LeadsResource.ts"
import type * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

export const EVENTS = "/api/v1/events"
export const STREAM = "/api/v1/stream"

/** GET the account's events with this query (`?type=…`), expecting 200: `{events, meta}`. */
export const eventsOf = async (target: Target, key: string, query = "") => {
  const reply = await call(target, "GET", `${EVENTS}${query}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as {
    events: Array<{
      id: string
      type: string
      created_at: string
      data: any
      previous_attributes?: Record<string, unknown>
    }>
    meta: {
      limit: number
      has_more: boolean
      next_starting_after: string | null
      previous_ending_before: string | null
    }
  }
}

/** The scopes that read a resource with events: each lets a key list that resource's events. */
export const READERS = [
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
  "agents:write"
] as const

/** The event log and its stream: reads of the caller's own account; its rows are the outbox's (the webhooks descriptor counts them). */
export const resource: Resource.Resource = {
  name: "events",
  routes: [
    {
      method: "GET",
      path: EVENTS,
      needs: READERS,
      succeeds: 200,
      request: async () => ({ path: EVENTS })
    },
    // The same events live: the same keys may open it (its answer here is its head: 200, an event stream).
    {
      method: "GET",
      path: STREAM,
      needs: READERS,
      succeeds: 200,
      request: async () => ({ path: STREAM })
    }
  ],
  // No route takes an id; another account's reads must not show what this one did (a lead, and its event).
  isolation: {
    noun: "lead",
    make: async ({ target }, key) => (await createLead(target, key)).id,
    read: ({ target }, key, id) => readLead(target, key, id),
    unknownId: unknownLeadId
  },
  ledger: { tables: [] }
}

import type { Admits } from "../Slice.ts"
import { READERS } from "./EventsResource.ts"

/** The event log and its stream admit every key that reads a resource with events (docs/contract.md, "Events", "Stream"): it sees those. */
const admitted = [...READERS, "all 16 scopes", "full access"] as const

export const admits: Admits = {
  "GET /api/v1/events": admitted,
  "GET /api/v1/stream": admitted
}

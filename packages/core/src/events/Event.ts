import { Schema } from "effect"

export const EVENT_TYPES = [
  "message.received",
  "message.sent",
  "lead.created",
  "lead.deleted",
  "order.created",
  "order.status_changed",
  "agent.config_changed",
  "knowledge.updated",
  "campaign.queued"
] as const

export const EventType = Schema.Literals(EVENT_TYPES).annotate({ identifier: "EventType" })
export type EventType = typeof EventType.Type

/** The body every webhook delivery carries; `data` is the resource as the API returns it. */
export const Envelope = Schema.Struct({
  id: Schema.String,
  type: EventType,
  created_at: Schema.String,
  account_id: Schema.String,
  data: Schema.Unknown
}).annotate({ identifier: "EventEnvelope" })
export type Envelope = typeof Envelope.Type

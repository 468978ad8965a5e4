import { Schema } from "effect"
import { Lead } from "../leads/Lead.ts"

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

// Resources whose API does not exist yet: an id and what the seed shows, open to more
// fields so that their own issue can add them without breaking receivers or emitters.
// Provisional until then (docs/decisions.md).
const provisional = <const Fields extends Schema.Struct.Fields>(identifier: string, fields: Fields) =>
  Schema.StructWithRest(Schema.Struct({ id: Schema.String, ...fields }), [
    Schema.Record(Schema.String, Schema.Unknown)
  ]).annotate({ identifier })

export const Message = provisional("EventMessage", {})
export const Order = provisional("EventOrder", { status: Schema.String })
export const Agent = provisional("EventAgent", {})
export const KnowledgeSource = provisional("EventKnowledgeSource", {})
export const Campaign = provisional("EventCampaign", {})

/** The schema of each event type's `data`: the resource as the API returns it. */
export const Data = {
  "message.received": Message,
  "message.sent": Message,
  "lead.created": Lead,
  "lead.deleted": Lead,
  "order.created": Order,
  "order.status_changed": Order,
  "agent.config_changed": Agent,
  "knowledge.updated": KnowledgeSource,
  "campaign.queued": Campaign
} as const satisfies { readonly [T in EventType]: Schema.Top }
export type Data<T extends EventType> = (typeof Data)[T]["Type"]

const envelope = <T extends EventType>(type: T) =>
  Schema.Struct({
    id: Schema.String,
    type: Schema.Literal(type),
    created_at: Schema.String,
    account_id: Schema.String,
    data: Data[type]
  }).annotate({ identifier: `EventEnvelope(${type})` })

type EnvelopeSchema<T extends EventType> = ReturnType<typeof envelope<T>>

/** The body of a delivery of each event type. */
export const Envelopes = Object.fromEntries(EVENT_TYPES.map((type) => [type, envelope(type)])) as {
  readonly [T in EventType]: EnvelopeSchema<T>
}
export type EnvelopeOf<T extends EventType> = EnvelopeSchema<T>["Type"]

/** The body every webhook delivery carries, whatever its type. */
export const Envelope = Schema.Union(EVENT_TYPES.map((type) => Envelopes[type])).annotate({
  identifier: "EventEnvelope"
})
export type Envelope = typeof Envelope.Type

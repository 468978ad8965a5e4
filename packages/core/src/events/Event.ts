import { Schema } from "effect"
import type { Permission } from "../auth/Scopes.ts"

/**
 * The event envelope, knowing no resource: each resource defines its own event
 * types (`define`) in its folder, and `EventCatalog.ts` gathers them from the list
 * of slices.
 */

/** The body of every webhook delivery, as the outbox stores it. */
export interface Envelope {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly account_id: string
  readonly data: unknown
  /** On a change event, the old values of exactly the fields that changed (Stripe's `previous_attributes`). */
  readonly previous_attributes?: Record<string, unknown>
}

const envelopeSchema = <const T extends string, S extends Schema.Top>(type: T, data: S) =>
  Schema.Struct({
    id: Schema.String,
    type: Schema.Literal(type),
    created_at: Schema.String,
    account_id: Schema.String,
    data,
    previous_attributes: Schema.optionalKey(
      Schema.Record(Schema.String, Schema.Unknown).annotate({
        description: "On a change event: the old values of exactly the fields that changed"
      })
    )
  }).annotate({ identifier: `EventEnvelope(${type})` })

/**
 * One event type: its name, the schema of its `data` (the resource as the API returns it), its
 * envelope, and the permission that lets a key see it (in `GET /api/v1/events`): its resource's own.
 */
export interface Definition<T extends string = string, S extends Schema.Top = Schema.Top> {
  readonly type: T
  readonly data: S
  readonly envelope: ReturnType<typeof envelopeSchema<T, S>>
  readonly view: Permission
}

export const define = <const T extends string, S extends Schema.Top>(
  type: T,
  data: S,
  view: Permission
): Definition<T, S> => ({
  type,
  data,
  envelope: envelopeSchema(type, data),
  view
})

/** The envelope of one definition's events, as a value. */
export type EnvelopeOf<D extends Definition> = D["envelope"]["Type"]

/**
 * The lead an event is about (a lead's own events, and those whose data names a `lead_id`): an
 * endpoint receives one lead's events in order (docs/contract.md, "Webhooks"). Events about no
 * lead (a campaign's, a template's) have none and are delivered in any order.
 */
export const orderingKeyOf = (event: Envelope): string | null => {
  const data = event.data as { readonly id?: unknown; readonly lead_id?: unknown } | null
  if (typeof data !== "object" || data === null) return null
  if (typeof data.lead_id === "string") return data.lead_id
  return event.type.startsWith("lead.") && typeof data.id === "string" ? data.id : null
}

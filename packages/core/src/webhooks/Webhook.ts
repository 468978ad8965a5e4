import { Schema } from "effect"
import { EventType } from "../EventCatalog.ts"
import { QueryTime } from "../Pagination.ts"
import { Text } from "../Text.ts"
import { RetryPolicy } from "./RetrySchedule.ts"

const Url = Schema.String.annotate({
  description:
    "Public https URL receiving POSTs. Loopback, private, link-local and internal addresses are refused (also after DNS, at delivery)."
})
const Events = Schema.Array(EventType).check(
  Schema.isMinLength(1, { message: "events must name at least one event type" }),
  Schema.makeFilter((events) => new Set(events).size === events.length || "events must be distinct")
)
const Description = Text.check(Schema.isMaxLength(500, { message: "description must be at most 500 characters" }))

export const RegisterEndpoint = Schema.Struct({
  url: Url,
  events: Events,
  description: Schema.optional(Description),
  retry_policy: Schema.optional(RetryPolicy)
}).annotate({ identifier: "RegisterEndpoint" })
export type RegisterEndpoint = typeof RegisterEndpoint.Type

/** `PATCH /api/webhooks/endpoints?id=`: the fields given change, the rest stay (docs/contract.md, "Webhooks"). */
export const UpdateEndpoint = Schema.Struct({
  url: Schema.optional(Url),
  events: Schema.optional(Events),
  description: Schema.optional(Schema.NullOr(Description)),
  retry_policy: Schema.optional(RetryPolicy),
  enabled: Schema.optional(
    Schema.Boolean.annotate({
      description:
        "false pauses the endpoint: no new deliveries, and pending ones wait; true sends what waited, at once"
    })
  )
}).annotate({ identifier: "UpdateEndpoint" })
export type UpdateEndpoint = typeof UpdateEndpoint.Type

export const Endpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventType),
  description: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  retry_policy: RetryPolicy,
  created_at: Schema.String
}).annotate({ identifier: "WebhookEndpoint" })
export type Endpoint = typeof Endpoint.Type

/** The answer to registration: the only time the secret is shown. */
export const CreatedEndpoint = Schema.Struct({
  ...Endpoint.fields,
  secret: Schema.String.annotate({ description: "`whsec_` + base64 of 32 random bytes; shown only here" })
}).annotate({ identifier: "CreatedWebhookEndpoint" })
export type CreatedEndpoint = typeof CreatedEndpoint.Type

export const DeletedEndpoint = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })

export const DeliveryStatus = Schema.Literals(["pending", "delivered", "failed", "cancelled"]).annotate({
  identifier: "DeliveryStatus",
  description: "`cancelled`: the endpoint was deleted before the delivery succeeded"
})
export type DeliveryStatus = typeof DeliveryStatus.Type

export const Attempt = Schema.Struct({
  number: Schema.Int,
  attempted_at: Schema.String,
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
}).annotate({ identifier: "DeliveryAttempt" })
export type Attempt = typeof Attempt.Type

export const Delivery = Schema.Struct({
  id: Schema.String,
  event_id: Schema.String,
  event_type: EventType,
  endpoint_id: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Array(Attempt),
  next_attempt_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "WebhookDelivery" })
export type Delivery = typeof Delivery.Type

/** A stored endpoint, secret included: what the worker and the repo see. */
export interface EndpointRecord extends Endpoint {
  readonly accountId: string
  readonly secret: string
  /** The secret before the last rotation, still signing deliveries until `previousSecretExpiresAt`. */
  readonly previousSecret: string | null
  readonly previousSecretExpiresAt: string | null
  /** The first failed attempt since the endpoint's last success (null while healthy). */
  readonly failingSince: string | null
}

/** The longest overlap a rotation may ask for: a week. */
export const MAX_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600

/** `POST /api/webhooks/endpoints/rotate-secret?id=`: a new secret, the old one kept for the overlap. */
export const RotateSecret = Schema.Struct({
  overlap_seconds: Schema.optional(
    Schema.Int.check(
      Schema.isBetween(
        { minimum: 0, maximum: MAX_ROTATION_OVERLAP_SECONDS },
        { message: `overlap_seconds must be between 0 and ${MAX_ROTATION_OVERLAP_SECONDS}` }
      )
    ).annotate({
      description:
        "How long deliveries stay signed with the old secret too (default 86400, 24 hours; 0 retires it at once)"
    })
  )
}).annotate({ identifier: "RotateWebhookSecret" })
export type RotateSecret = typeof RotateSecret.Type

export const RotatedSecret = Schema.Struct({
  ...Endpoint.fields,
  secret: Schema.String.annotate({ description: "The new secret (`whsec_…`); shown only here" }),
  previous_secret_expires_at: Schema.NullOr(Schema.String).annotate({
    description: "Until then every delivery carries a `webhook-signature` for the old secret as well"
  })
}).annotate({ identifier: "RotatedWebhookSecret" })
export type RotatedSecret = typeof RotatedSecret.Type

/** `POST /api/webhooks/endpoints/recover?id=`: the endpoint's failed deliveries since `since`, queued again. */
export const RecoverDeliveries = Schema.Struct({
  since: QueryTime.annotate({
    description: "Requeue the deliveries that failed and were created at or after this time"
  })
}).annotate({ identifier: "RecoverWebhookDeliveries" })
export type RecoverDeliveries = typeof RecoverDeliveries.Type

export const RecoveredDeliveries = Schema.Struct({
  requeued: Schema.Int.annotate({ description: "How many failed deliveries were queued again, oldest first" })
}).annotate({ identifier: "RecoveredWebhookDeliveries" })
export type RecoveredDeliveries = typeof RecoveredDeliveries.Type

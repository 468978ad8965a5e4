import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Meta, PageQueryFields } from "@leadline/core/Pagination"
import { Id } from "@leadline/core/Text"
import {
  CreatedEndpoint,
  DeletedEndpoint,
  Delivery,
  DeliveryStatus,
  Endpoint,
  RecoverDeliveries,
  RecoveredDeliveries,
  RegisterEndpoint,
  RotatedSecret,
  RotateSecret,
  UpdateEndpoint
} from "@leadline/core/webhooks/Webhook"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Conflict, Forbidden, NotFound, ValidationError } from "../WireErrors.ts"

const Uuid = Schema.String.check(
  Schema.isPattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { message: "Expected a UUID" })
)

export const EndpointList = Schema.Struct({ endpoints: Schema.Array(Endpoint), meta: Meta }).annotate({
  identifier: "WebhookEndpointList"
})
export const DeliveryList = Schema.Struct({ deliveries: Schema.Array(Delivery), meta: Meta }).annotate({
  identifier: "WebhookDeliveryList"
})

const FULL_ACCESS = "Needs a full-access key (one with no scopes)."

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    Idempotent.create("register", "/endpoints", {
      payload: RegisterEndpoint,
      success: CreatedEndpoint,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Register a webhook endpoint",
        description: `Returns the signing secret, shown only here. ${FULL_ACCESS}`
      })
    ),
    HttpApiEndpoint.get("listEndpoints", "/endpoints", {
      query: PageQueryFields,
      success: EndpointList,
      error: Forbidden
    }).annotateMerge(
      OpenApi.annotations({
        summary: "List webhook endpoints",
        description: `Newest first, no secrets. ${FULL_ACCESS}`
      })
    ),
    HttpApiEndpoint.patch("updateEndpoint", "/endpoints", {
      query: { id: Uuid },
      payload: UpdateEndpoint,
      success: Endpoint,
      error: [Forbidden, NotFound, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Change a webhook endpoint",
        description: `Changes the fields given: \`url\` (checked as at registration), \`events\`, \`description\` (\`null\` clears it), \`enabled\`. \`enabled: false\` pauses the endpoint: new events are not delivered to it and its pending deliveries wait; \`true\` sends what waited at once. ${FULL_ACCESS}`
      })
    ),
    HttpApiEndpoint.delete("deleteEndpoint", "/endpoints", {
      query: { id: Uuid },
      success: DeletedEndpoint,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete a webhook endpoint",
        description: `Pending deliveries to it are cancelled. ${FULL_ACCESS}`
      })
    ),
    HttpApiEndpoint.post("rotateSecret", "/endpoints/rotate-secret", {
      query: { id: Uuid },
      payload: RotateSecret,
      success: RotatedSecret,
      error: [Forbidden, NotFound, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Rotate an endpoint's signing secret",
        description: `Returns a new secret, shown only here. For \`overlap_seconds\` (default 86400; at most 604800; 0 ends it at once) every delivery's \`webhook-signature\` carries two signatures, one per secret, space-separated, so a receiver can switch without losing a delivery; \`X-Service-Signature\` is made with the new secret only. A second rotation within the overlap retires the oldest secret. ${FULL_ACCESS}`
      })
    ),
    HttpApiEndpoint.post("recoverDeliveries", "/endpoints/recover", {
      query: { id: Uuid },
      payload: RecoverDeliveries,
      success: RecoveredDeliveries,
      error: [Forbidden, NotFound, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Requeue an endpoint's failed deliveries",
        description: `Every delivery to the endpoint that ended \`failed\` and was created at or after \`since\` gets a fresh round of attempts now, oldest first (each lead's in order); on a disabled endpoint they wait until it is enabled. ${FULL_ACCESS}`
      })
    ),
    HttpApiEndpoint.get("listDeliveries", "/deliveries", {
      query: { ...PageQueryFields, endpoint_id: Schema.optional(Uuid), status: Schema.optional(DeliveryStatus) },
      success: DeliveryList,
      error: Forbidden
    }).annotateMerge(
      OpenApi.annotations({
        summary: "The delivery log",
        description: `Newest first, each with its attempts; filter by \`endpoint_id\` and \`status\`. ${FULL_ACCESS}`
      })
    ),
    HttpApiEndpoint.post("redeliver", "/deliveries/redeliver", {
      query: { id: Id },
      success: Delivery,
      error: [Forbidden, NotFound, Conflict]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Deliver again",
        description: `Queues a fresh round of attempts (up to four) for a delivered or failed delivery. ${FULL_ACCESS}`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/webhooks")
  .annotateMerge(
    OpenApi.annotations({
      title: "Webhooks",
      description:
        "Signed POSTs to your endpoints when events happen, at least once, each lead's in order; retried after 1, 2 and 4 s (or over about a day with `retry_policy: extended`). Verify `X-Service-Signature` (hex HMAC-SHA256 of the body with the secret) or the Standard Webhooks headers. An endpoint that fails every attempt for 5 days is disabled (`webhook_endpoint.disabled`)."
    })
  ) {}

import { Schema } from "effect"
import * as Event from "./Event.ts"

/**
 * The events of the platform's own services (not of a resource): the webhooks'. They sit here, below
 * the catalog, because the services' folders name the catalog (an endpoint's `events`); so their
 * data is described here rather than as `webhooks/Webhook.ts`'s endpoint.
 */
export const DisabledEndpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  enabled: Schema.Literal(false),
  failing_since: Schema.String.annotate({ description: "The first failed attempt since the last success" }),
  disabled_at: Schema.String
}).annotate({ identifier: "DisabledWebhookEndpoint" })

/** An endpoint that failed every attempt for the configured time was disabled (docs/contract.md, "Webhooks"). */
export const endpointDisabled = Event.define("webhook_endpoint.disabled", DisabledEndpoint, "webhooks.manage")

/** Every platform event type, gathered beside the resources' by `EventCatalog.ts`. */
export const events = [endpointDisabled] as const

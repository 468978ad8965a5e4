import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as Webhooks0002 from "./migrations/0002_webhooks.ts"
import * as EventsByAccount0040 from "./migrations/0040_events_by_account.ts"
import * as WebhookRetryPolicy0041 from "./migrations/0041_webhook_retry_policy.ts"
import * as WebhookOrderRotationHealth0043 from "./migrations/0043_webhook_order_rotation_health.ts"
import * as WebhooksKeyedByAccount0044 from "./migrations/0044_webhooks_keyed_by_account.ts"
import * as SqlEventFeed from "../eventlog/SqlEventFeed.ts"
import * as SqlEventLog from "../eventlog/SqlEventLog.ts"
import * as SqlDeliveryQueue from "./SqlDeliveryQueue.ts"
import * as SqlOutbox from "./SqlOutbox.ts"
import * as SqlWebhooks from "./SqlWebhooks.ts"

/** Endpoints and deliveries, the outbox that queues them (and records events), the worker's queue, and the events' log (by id, and in commit order for the streams). */
export const slice = Slice.make({
  name: "webhooks",
  layer: Layer.mergeAll(
    SqlWebhooks.layer,
    SqlOutbox.layer,
    SqlDeliveryQueue.layer,
    SqlEventLog.layer,
    SqlEventFeed.layer
  ),
  migrations: [
    Webhooks0002.migration,
    EventsByAccount0040.migration,
    WebhookRetryPolicy0041.migration,
    WebhookOrderRotationHealth0043.migration,
    WebhooksKeyedByAccount0044.migration
  ]
})

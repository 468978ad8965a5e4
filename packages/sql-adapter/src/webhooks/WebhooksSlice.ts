import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as Webhooks0002 from "./migrations/0002_webhooks.ts"
import * as SqlDeliveryQueue from "./SqlDeliveryQueue.ts"
import * as SqlOutbox from "./SqlOutbox.ts"
import * as SqlWebhooks from "./SqlWebhooks.ts"

/** Endpoints and deliveries, the outbox that queues them (and records events), and the worker's queue. */
export const slice = Slice.make({
  name: "webhooks",
  layer: Layer.mergeAll(SqlWebhooks.layer, SqlOutbox.layer, SqlDeliveryQueue.layer),
  migrations: [Webhooks0002.migration]
})

import { Layer } from "effect"
import * as SqlAccounts from "./SqlAccounts.ts"
import * as SqlDeliveryQueue from "./SqlDeliveryQueue.ts"
import * as SqlIdempotency from "./SqlIdempotency.ts"
import * as SqlLeads from "./SqlLeads.ts"
import * as SqlOutbox from "./SqlOutbox.ts"
import * as SqlTransactor from "./SqlTransactor.ts"
import * as SqlWebhooks from "./SqlWebhooks.ts"

/** Every core port over an `SqlClient` (PostgreSQL or PGlite: the same SQL); needs `Notifications`. */
export const layer = Layer.mergeAll(
  SqlTransactor.layer,
  SqlAccounts.layer,
  SqlLeads.layer,
  SqlIdempotency.layer,
  SqlOutbox.layer,
  SqlWebhooks.layer,
  SqlDeliveryQueue.layer
)

import { Layer } from "effect"
import { Identity } from "./accounts/Identity.ts"
import { Operator } from "./accounts/Operator.ts"
import { Authenticator } from "./auth/Authenticator.ts"
import { Idempotency } from "./idempotency/Idempotency.ts"
import { Leads } from "./leads/Leads.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"

/** Every domain service, needing only the ports: give it a store wiring (memory or SQL) and it runs. */
export const layer = Layer.mergeAll(
  Authenticator.layer,
  Identity.layer,
  Operator.layer,
  Leads.layer,
  Idempotency.layer,
  Webhooks.layer
)

/** What the transport needs from the domain. */
export type Services = Layer.Success<typeof layer>

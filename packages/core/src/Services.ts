import { Layer } from "effect"
import { Identity } from "./accounts/Identity.ts"
import { Analytics } from "./analytics/Analytics.ts"
import { Operator } from "./accounts/Operator.ts"
import { AccountKeys } from "./auth/AccountKeys.ts"
import { ApiKeyCache } from "./auth/ApiKeyCache.ts"
import { Authenticator } from "./auth/Authenticator.ts"
import { KeyIssuer } from "./auth/KeyIssuer.ts"
import { Idempotency } from "./idempotency/Idempotency.ts"
import * as Slices from "./Slices.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"

type SliceLayers = Slices.All[number]["layer"]

// Spread from the list loses the tuple; the type is restated from the same list.
const slices = Layer.mergeAll(...(Slices.all.map((slice) => slice.layer) as [SliceLayers])) as Layer.Layer<
  Layer.Success<SliceLayers>,
  Layer.Error<SliceLayers>,
  Layer.Services<SliceLayers>
>

/** Every domain service, needing only the ports: give it a store wiring (memory or SQL) and it runs. */
export const layer = Layer.mergeAll(
  // One cache for the process: the services that change keys empty the one authentication reads.
  Layer.mergeAll(Authenticator.layer, Operator.layer, AccountKeys.layer).pipe(
    Layer.provide(KeyIssuer.layer),
    Layer.provide(ApiKeyCache.layer)
  ),
  Identity.layer,
  Idempotency.layer,
  Webhooks.layer,
  Analytics.layer,
  slices
)

/** What the transport needs from the domain. */
export type Services = Layer.Success<typeof layer>

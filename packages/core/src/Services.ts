import { Layer } from "effect"
import { Identity } from "./identity/Identity.ts"
import { Analytics } from "./analytics/Analytics.ts"
import { Operator } from "./admin/Operator.ts"
import { AccountKeys } from "./keys/AccountKeys.ts"
import { ApiKeyCache } from "./auth/ApiKeyCache.ts"
import { Authenticator } from "./auth/Authenticator.ts"
import { KeyIssuer } from "./auth/KeyIssuer.ts"
import { Idempotency } from "./idempotency/Idempotency.ts"
import * as Slices from "./Slices.ts"
import { Events } from "./eventlog/Events.ts"
import { EventStream } from "./eventlog/EventStream.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"
import { EndpointHealth } from "./webhooks/EndpointHealth.ts"

type SliceLayers = Slices.All[number]["layer"]
type Hooks = NonNullable<Slices.All[number]["hooks"]>[number]
type Reactions = NonNullable<Slices.All[number]["reactions"]>[number]

/**
 * The slices' services and their reactions, over one set of hooks: a lower resource runs, inside
 * its unit of work, the handlers the higher ones added. Spread from the list loses the tuple;
 * the type is restated from the same list.
 */
const slices = Layer.mergeAll(
  ...(Slices.all.flatMap((slice): ReadonlyArray<Layer.Any> => [slice.layer, ...(slice.reactions ?? [])]) as [
    SliceLayers | Reactions
  ])
).pipe(
  Layer.provide(
    Layer.mergeAll(...(Slices.all.flatMap((slice): ReadonlyArray<Layer.Any> => slice.hooks ?? []) as [Hooks]))
  )
) as Layer.Layer<
  Layer.Success<SliceLayers>,
  Layer.Error<SliceLayers | Reactions>,
  Exclude<Layer.Services<SliceLayers | Reactions>, Layer.Success<Hooks>>
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
  EndpointHealth.layer,
  Events.layer,
  EventStream.layer,
  Analytics.layer,
  slices
)

/** What the transport needs from the domain. */
export type Services = Layer.Success<typeof layer>

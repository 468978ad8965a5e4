import type { Layer } from "effect"
import type * as Metrics from "./analytics/Metrics.ts"
import type * as Event from "./events/Event.ts"

/**
 * What a resource brings to the core: its domain services (a layer that needs only
 * ports), the event types it emits and, where it counts something, its analytics
 * metrics. `Slices.ts` lists them; the service layer, the event catalog and the
 * analytics service are derived from that list.
 */
export interface Slice<
  Name extends string = string,
  L extends Layer.Any = Layer.Any,
  Events extends ReadonlyArray<Event.Definition> = ReadonlyArray<Event.Definition>,
  M extends Metrics.Any | undefined = Metrics.Any | undefined
> {
  readonly name: Name
  readonly layer: L
  readonly events: Events
  readonly metrics?: M
}

export const make = <
  const Name extends string,
  L extends Layer.Any,
  const Events extends ReadonlyArray<Event.Definition>,
  M extends Metrics.Any | undefined = undefined
>(
  slice: Slice<Name, L, Events, M>
): Slice<Name, L, Events, M> => slice

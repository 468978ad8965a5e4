import type { Layer } from "effect"
import type * as Event from "./events/Event.ts"
import type * as Metrics from "./metrics/Metrics.ts"

/**
 * What a resource brings to the core: its domain services (a layer that needs only ports and
 * the hooks of the resources below it), the event types it emits, where it counts something its
 * analytics metrics, the hooks it offers the resources above it (`Hook.layer`) and its reactions
 * to the hooks of the resources below (`Hook.on`). `Slices.ts` lists them; the service layer, the
 * event catalog and the analytics service are derived from that list.
 */
export interface Slice<
  Name extends string = string,
  L extends Layer.Any = Layer.Any,
  Events extends ReadonlyArray<Event.Definition> = ReadonlyArray<Event.Definition>,
  M extends Metrics.Any | undefined = Metrics.Any | undefined,
  H extends ReadonlyArray<Layer.Any> = ReadonlyArray<Layer.Any>,
  X extends ReadonlyArray<Layer.Any> = ReadonlyArray<Layer.Any>
> {
  readonly name: Name
  readonly layer: L
  readonly events: Events
  readonly metrics?: M
  readonly hooks?: H
  readonly reactions?: X
}

export const make = <
  const Name extends string,
  L extends Layer.Any,
  const Events extends ReadonlyArray<Event.Definition>,
  M extends Metrics.Any | undefined = undefined,
  const H extends ReadonlyArray<Layer.Any> = readonly [],
  const X extends ReadonlyArray<Layer.Any> = readonly []
>(
  slice: Slice<Name, L, Events, M, H, X>
): Slice<Name, L, Events, M, H, X> => slice

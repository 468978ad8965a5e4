import type { Layer } from "effect"
import type * as Event from "./events/Event.ts"

/**
 * What a resource brings to the core: its domain services (a layer that needs only
 * ports) and the event types it emits. `Slices.ts` lists them; the service layer
 * and the event catalog are derived from that list.
 */
export interface Slice<
  Name extends string = string,
  L extends Layer.Any = Layer.Any,
  Events extends ReadonlyArray<Event.Definition> = ReadonlyArray<Event.Definition>
> {
  readonly name: Name
  readonly layer: L
  readonly events: Events
}

export const make = <
  const Name extends string,
  L extends Layer.Any,
  const Events extends ReadonlyArray<Event.Definition>
>(
  slice: Slice<Name, L, Events>
): Slice<Name, L, Events> => slice

import { Schema } from "effect"
import * as Slices from "./Slices.ts"
import * as PlatformEvents from "./events/PlatformEvents.ts"

/** Every event type of every slice, and the platform's own (webhook subscriptions name these). */
export type Definitions = Slices.All[number]["events"][number] | (typeof PlatformEvents.events)[number]
export type EventType = Definitions["type"]
type DefinitionOf<T extends EventType> = Extract<Definitions, { readonly type: T }>

export const definitions: ReadonlyArray<Definitions> = [
  ...Slices.all.flatMap((slice): ReadonlyArray<Definitions> => slice.events),
  ...PlatformEvents.events
]

export const EVENT_TYPES: ReadonlyArray<EventType> = definitions.map((definition) => definition.type)

export const EventType = Schema.Literals(EVENT_TYPES).annotate({ identifier: "EventType" })

const byType = <K extends "data" | "envelope">(key: K) =>
  Object.fromEntries(definitions.map((definition) => [definition.type, definition[key]])) as {
    readonly [T in EventType]: DefinitionOf<T>[K]
  }

/** The schema of each event type's `data`: the resource as the API returns it. */
export const Data = byType("data")

/** The body of a delivery of each event type. */
export const Envelopes = byType("envelope")

/** The body every webhook delivery carries, whatever its type. */
export const Envelope = Schema.Union(definitions.map((definition) => definition.envelope)).annotate({
  identifier: "EventEnvelope"
})
export type Envelope = typeof Envelope.Type

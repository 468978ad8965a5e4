import { Layer, Schema } from "effect"
import * as Event from "./Event.ts"
import * as Slice from "../Slice.ts"

// Event types of resources whose API does not exist yet: an id and what the seed
// shows, open to more fields so that their own issue can add them without breaking
// receivers or emitters (docs/decisions.md). Each moves to its resource's folder
// when that resource is built.
const provisional = <const Fields extends Schema.Struct.Fields>(identifier: string, fields: Fields) =>
  Schema.StructWithRest(Schema.Struct({ id: Schema.String, ...fields }), [
    Schema.Record(Schema.String, Schema.Unknown)
  ]).annotate({ identifier })

export const agentConfigChanged = Event.define("agent.config_changed", provisional("EventAgent", {}))
export const knowledgeUpdated = Event.define("knowledge.updated", provisional("EventKnowledgeSource", {}))

/** Not a resource: the event types that are reserved until their resources exist. */
export const slice = Slice.make({
  name: "provisional",
  layer: Layer.empty,
  events: [agentConfigChanged, knowledgeUpdated]
})

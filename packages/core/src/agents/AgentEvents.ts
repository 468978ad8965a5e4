import { Schema } from "effect"
import * as Event from "../events/Event.ts"
import { Agent } from "./Agent.ts"

/**
 * `agent.config_changed` ("an agent's configuration is modified"): on create, on every change
 * (with `previous_attributes`) and on delete (`deleted: true`).
 */
export const configChanged = Event.define(
  "agent.config_changed",
  Schema.Struct({ ...Agent.fields, deleted: Schema.optional(Schema.Literal(true)) }).annotate({
    identifier: "EventAgent"
  }),
  "agents.view"
)

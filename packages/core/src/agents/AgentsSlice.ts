import * as Slice from "../Slice.ts"
import * as AgentEvents from "./AgentEvents.ts"
import { Agents } from "./Agents.ts"

/** AI agents' configuration (CONTRACT-COMMERCE-AI §5). */
export const slice = Slice.make({
  name: "agents",
  layer: Agents.layer,
  events: [AgentEvents.configChanged]
})

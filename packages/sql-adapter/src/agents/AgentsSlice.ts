import * as Slice from "../Slice.ts"
import * as Agents0013 from "./migrations/0013_agents.ts"
import * as SqlAgents from "./SqlAgents.ts"

/** AI agents' configuration (CONTRACT-COMMERCE-AI §5). */
export const slice = Slice.make({
  name: "agents",
  layer: SqlAgents.layer,
  migrations: [Agents0013.migration]
})

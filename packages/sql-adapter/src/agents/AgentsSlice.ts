import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as Agents0013 from "./migrations/0013_agents.ts"
import * as AgentJobs0015 from "./migrations/0015_agent_jobs.ts"
import * as SqlAgentJobs from "./SqlAgentJobs.ts"
import * as SqlAgents from "./SqlAgents.ts"

/** AI agents' configuration (docs/contract-commerce-ai.md §5) and the inbound messages they are to answer. */
export const slice = Slice.make({
  name: "agents",
  layer: Layer.mergeAll(SqlAgents.layer, SqlAgentJobs.layer),
  migrations: [Agents0013.migration, AgentJobs0015.migration]
})

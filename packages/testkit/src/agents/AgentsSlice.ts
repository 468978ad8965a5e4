import * as Slice from "../Slice.ts"
import * as AgentsContract from "./AgentsContract.ts"
import * as AgentsResource from "./AgentsResource.ts"
import * as AgentsSecurity from "./AgentsSecurity.ts"
import * as SimulationContract from "./SimulationContract.ts"

export const slice = Slice.make({
  name: "agents",
  resources: [AgentsResource.resource],
  contract: (context) => {
    AgentsContract.contract(context)
    SimulationContract.contract(context)
  },
  admits: AgentsSecurity.admits
})

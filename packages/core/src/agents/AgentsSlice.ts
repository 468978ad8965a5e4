import { Layer } from "effect"
import { Messages } from "../messages/Messages.ts"
import * as Slice from "../Slice.ts"
import * as AgentEvents from "./AgentEvents.ts"
import * as AgentReactions from "./AgentReactions.ts"
import { AgentResponder } from "./AgentResponder.ts"
import { Agents } from "./Agents.ts"

/** AI agents' configuration (docs/contract-commerce-ai.md §5) and their live replies (`AgentResponder.loop` runs them). */
export const slice = Slice.make({
  name: "agents",
  // The responder queues replies as any send is queued: through Messages, a stateless service.
  layer: Layer.mergeAll(Agents.layer, AgentResponder.layer().pipe(Layer.provide(Messages.layer))),
  events: [AgentEvents.configChanged],
  reactions: [AgentReactions.answerInbound, AgentReactions.forgetRemovedSource]
})

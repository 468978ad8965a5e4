import { Layer } from "effect"
import { Messages } from "../messages/Messages.ts"
import * as Slice from "../Slice.ts"
import * as OptOutReactions from "./OptOutReactions.ts"
import { OptOuts } from "./OptOuts.ts"

/** Marketing opt-outs by keyword; confirmations queue through Messages (a stateless service), as any send does. */
const layer = OptOuts.layer.pipe(Layer.provide(Messages.layer))

export const slice = Slice.make({
  name: "optouts",
  layer,
  events: [],
  reactions: [OptOutReactions.fromInbound.pipe(Layer.provide(layer))]
})

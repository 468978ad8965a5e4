import { Effect } from "effect"
import * as Hook from "../Hook.ts"
import { InboundReceived } from "../messages/InboundReceived.ts"
import { OptOuts } from "./OptOuts.ts"

/** A keyword in a new inbound text opts its lead out (or back in), in the transaction that stored it. */
export const fromInbound = Hook.on(
  InboundReceived,
  "optouts",
  Effect.map(OptOuts, (optOuts) => (received) => optOuts.received(received))
)

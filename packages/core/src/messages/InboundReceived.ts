import { Context } from "effect"
import type { CurrentPrincipal } from "../auth/Principal.ts"
import type { Conversation } from "../conversations/Conversation.ts"
import * as Hook from "../Hook.ts"
import type { Message } from "./Message.ts"

export interface Received {
  readonly accountId: string
  /** The messages stored by this change (a redelivered one is not among them), after `message.received`. */
  readonly messages: ReadonlyArray<Message>
  /** Their conversations, as they were when the messages arrived. */
  readonly threads: ReadonlyArray<Conversation>
}

/**
 * The hook run when inbound messages are stored, in the same transaction: a WhatsApp `order`
 * message places its order, an agent is asked to answer a text. What reacts commits with the
 * messages, so a crash forgets none of it.
 */
export class InboundReceived extends Context.Service<InboundReceived, Hook.Handlers<Received, CurrentPrincipal>>()(
  "core/InboundReceived"
) {
  static readonly layer = Hook.layer(InboundReceived)
}

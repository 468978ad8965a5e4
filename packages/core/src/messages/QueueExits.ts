import { Context } from "effect"
import type { CurrentPrincipal } from "../auth/Principal.ts"
import * as Hook from "../Hook.ts"
import type { DeliveryError } from "./StatusMerge.ts"

/**
 * WhatsApp's refusals of a template itself (docs/contract-messaging.md §8.2): 132000 parameter
 * count mismatch, 132001 template does not exist, 132015 template paused. Every other message
 * with that template would be refused the same way.
 */
export const TEMPLATE_ERRORS: ReadonlySet<number> = new Set([132000, 132001, 132015])

/** What happened to one campaign's messages in one change. */
export interface Touched {
  readonly campaignId: string
  /** One of its messages left `queued` (sent, failed, cancelled, or deleted with its lead). */
  readonly leftQueue: boolean
  /** WhatsApp refused its template (one of `TEMPLATE_ERRORS`). */
  readonly templateError?: DeliveryError | undefined
}

export interface Exits {
  readonly accountId: string
  readonly touched: ReadonlyArray<Touched>
}

/**
 * The hook run when campaign messages leave the queue (a send's outcome, a status, a lead's
 * removal), inside that change's transaction: campaigns follow their messages from it.
 */
export class QueueExits extends Context.Service<QueueExits, Hook.Handlers<Exits, CurrentPrincipal>>()(
  "core/QueueExits"
) {
  static readonly layer = Hook.layer(QueueExits)
}

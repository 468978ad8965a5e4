import { Context } from "effect"
import type { CurrentPrincipal } from "../auth/Principal.ts"
import * as Hook from "../Hook.ts"

export interface Removal {
  readonly accountId: string
  readonly leadId: string
}

/**
 * The hook run when a lead is deleted, in the delete's transaction and before the lead's row
 * goes: what hangs off a lead in the resources above (its conversations and messages, their
 * usage, the campaigns waiting for them) goes with it. The seed's delete is a hard delete.
 */
export class LeadRemoval extends Context.Service<LeadRemoval, Hook.Handlers<Removal, CurrentPrincipal>>()(
  "core/LeadRemoval"
) {
  static readonly layer = Hook.layer(LeadRemoval)
}

import { Context } from "effect"
import type { CurrentPrincipal } from "../auth/Principal.ts"
import * as Hook from "../Hook.ts"

export interface Removal {
  readonly accountId: string
  readonly sourceId: string
}

/** The hook run when a knowledge source is deleted, in the delete's transaction: agents stop citing it. */
export class SourceRemoval extends Context.Service<SourceRemoval, Hook.Handlers<Removal, CurrentPrincipal>>()(
  "core/SourceRemoval"
) {
  static readonly layer = Hook.layer(SourceRemoval)
}

import { Context, Effect } from "effect"
import { PermissionDenied } from "../Errors.ts"
import * as Scopes from "./Scopes.ts"

export type Role = "owner" | "admin" | "member"

/** Who is calling: resolved from the API key by the transport, read by every domain service. */
export interface Principal {
  readonly accountId: string
  readonly userId: string
  readonly ownerUserId: string
  readonly role: Role
  readonly keyId: string
  readonly scopes: ReadonlyArray<Scopes.Scope>
}

export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("core/CurrentPrincipal") {}

/** The one gate every domain operation passes: the caller's key must grant `permission`. */
export const authorize = (
  permission: Scopes.Permission
): Effect.Effect<Principal, PermissionDenied, CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (principal) =>
    Scopes.allows(principal.scopes, permission)
      ? Effect.succeed(principal)
      : Effect.fail(new PermissionDenied({ required: Scopes.requirementFor(permission) }))
  )

/**
 * For operations no scope grants and that have no permission of their own in docs/contract.md's
 * list (channels, conversation changes): only a full-access key, so `/api/me` stays as pinned.
 */
export const authorizeFullAccess: Effect.Effect<Principal, PermissionDenied, CurrentPrincipal> = Effect.flatMap(
  CurrentPrincipal,
  (principal) =>
    principal.scopes.length === 0
      ? Effect.succeed(principal)
      : Effect.fail(new PermissionDenied({ required: Scopes.FULL_ACCESS }))
)

import { Context, type Effect, type Scope } from "effect"

/**
 * Tells this process that an API key changed (its scopes, or a revocation) on any
 * server sharing the store: the SQL adapter LISTENs for what its key writes NOTIFY
 * at commit. `changes` is an effect that waits for the next change; a listener that
 * is lost says nothing more, which `ApiKeyCache`'s short time-to-live covers.
 */
export class ApiKeyChanges extends Context.Service<
  ApiKeyChanges,
  { readonly changes: Effect.Effect<Effect.Effect<void>, never, Scope.Scope> }
>()("core/ApiKeyChanges") {}

import { Context, type Effect } from "effect"
import type { Listed, Page } from "../Pagination.ts"
import type { ApiKey, ApiKeyGrant } from "./ApiKey.ts"
import type * as Scopes from "./Scopes.ts"

/** API keys, looked up by the hash of the key. */
export class ApiKeysRepo extends Context.Service<
  ApiKeysRepo,
  {
    readonly insert: (key: ApiKey) => Effect.Effect<void>
    readonly findGrantByHash: (hash: string) => Effect.Effect<ApiKeyGrant | undefined>
    readonly find: (keyId: string) => Effect.Effect<ApiKey | undefined>
    /** Every key of the account, oldest first (the operator's listing). */
    readonly listByAccount: (accountId: string) => Effect.Effect<ReadonlyArray<ApiKey>>
    /** A page of the account's keys, revoked ones included, newest first (`createdAt` desc, then `id` desc). */
    readonly pageByAccount: (accountId: string, page: Page) => Effect.Effect<Listed<ApiKey>>
    readonly setScopes: (keyId: string, scopes: ReadonlyArray<Scopes.Scope>) => Effect.Effect<void>
    readonly revoke: (keyId: string, at: string) => Effect.Effect<void>
  }
>()("core/ApiKeysRepo") {}

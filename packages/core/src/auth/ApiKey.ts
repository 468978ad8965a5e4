import { Schema } from "effect"
import { Text } from "../Text.ts"
import type { Role } from "./Principal.ts"
import * as Scopes from "./Scopes.ts"

/** A key's label: free text up to 200 characters. */
export const KeyName = Text.check(Schema.isMaxLength(200, { message: "name must be at most 200 characters" }))

export interface ApiKey {
  readonly id: string
  readonly accountId: string
  readonly userId: string
  readonly name: string
  readonly scopes: ReadonlyArray<Scopes.Scope>
  /** SHA-256 of the key, hex; the key itself is never stored. */
  readonly hash: string
  /** The first characters of the key, to tell keys apart in listings. */
  readonly prefix: string
  readonly createdAt: string
  readonly revokedAt: string | null
}

/** A key joined with what authentication needs to build a principal. */
export interface ApiKeyGrant {
  readonly key: ApiKey
  readonly role: Role
  readonly ownerUserId: string
}

/** A key as listings show it: never the key itself, nor its hash. */
export const KeySummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  user_id: Schema.String,
  prefix: Schema.String,
  scopes: Scopes.ScopeList,
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ApiKeySummary" })
export type KeySummary = typeof KeySummary.Type

export const SetScopes = Schema.Struct({ scopes: Scopes.ScopeList })
export const RevokedKey = Schema.Struct({ id: Schema.String, revoked: Schema.Boolean })
export type RevokedKey = typeof RevokedKey.Type

export const summarize = (key: ApiKey): KeySummary => ({
  id: key.id,
  name: key.name,
  user_id: key.userId,
  prefix: key.prefix,
  scopes: key.scopes,
  created_at: key.createdAt,
  revoked_at: key.revokedAt
})

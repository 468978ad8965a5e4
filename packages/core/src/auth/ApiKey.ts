import type { Role } from "./Principal.ts"
import type * as Scopes from "./Scopes.ts"

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

import { Context, type Effect } from "effect"

/** A response as it went out, kept so a replay can return it byte for byte. */
export interface StoredResponse {
  readonly status: number
  readonly contentType: string
  readonly body: string
  /** The `ETag` it went out with, when it named a version (a versioned resource's create). */
  readonly etag?: string
}

export type Reservation =
  | { readonly _tag: "Reserved" }
  | { readonly _tag: "InProgress"; readonly fingerprint: string }
  | { readonly _tag: "Completed"; readonly fingerprint: string; readonly response: StoredResponse }

export interface KeyRef {
  readonly accountId: string
  readonly key: string
}

/**
 * Idempotency records, one per (account, key). `reserve` is atomic: of two
 * callers with one key, one gets `Reserved`. An expired record counts as absent.
 */
export class IdempotencyStore extends Context.Service<
  IdempotencyStore,
  {
    readonly reserve: (ref: KeyRef, fingerprint: string, now: number, expiresAt: number) => Effect.Effect<Reservation>
    readonly complete: (ref: KeyRef, response: StoredResponse) => Effect.Effect<void>
    readonly release: (ref: KeyRef) => Effect.Effect<void>
    /** Deletes records that expired before `now`; returns how many. */
    readonly purgeExpired: (now: number) => Effect.Effect<number>
  }
>()("core/IdempotencyStore") {}

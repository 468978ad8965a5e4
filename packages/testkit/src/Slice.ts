import type { Scope } from "@leadline/core/auth/Scopes"
import type { ContractTarget, SuiteOptions } from "./ContractSuite.ts"
import type { AccountFixture } from "./Fixtures.ts"
import type * as Resource from "./Resource.ts"
import type { Target } from "./TestServer.ts"

/**
 * What a slice brings to the testkit: the descriptors of its resources, its part
 * of the contract suite and its parts of the OWASP suite. `Resources.ts` lists the
 * slices; the runners (`ContractSuite.ts`, the security suite) iterate that list.
 */
export interface Slice {
  /** The folder's name, as in core. */
  readonly name: string
  readonly resources: ReadonlyArray<Resource.Resource>
  /** Registers its contract tests (`describe`s), against any wiring or a live URL. */
  readonly contract?: ((context: ContractContext) => void) | undefined
  /** Registers its resource-specific checks, under the OWASP item each belongs to. */
  readonly security?: Partial<Record<OwaspItem, (context: SecurityContext) => void>> | undefined
  /**
   * The keys each API route of its resources admits, by route (`GET /api/v1/leads`), as the
   * contract states them (in its `*Security.ts`). The OWASP suite's API5 holds the scope
   * matrix it generates from the routes' `needs` to this statement, and fails on an API
   * route of the slice that it leaves out.
   */
  readonly admits?: Admits | undefined
}

export const make = (slice: Slice): Slice => slice

/**
 * A key the OWASP suite's API5 tries on every API route: one with a single scope, one
 * with all 16 scopes (still not full access), or the full-access one (no scopes).
 */
export type KeySet = Scope | "all 16 scopes" | "full access"

/**
 * What a slice states each of its API routes admits: every key set, or the listed ones.
 * Written out by hand, never computed from `needs`, so that a slip in a descriptor's
 * `needs` or in `Resource.allows` cannot hide behind the matrix they generate.
 */
export type Admits = Readonly<Record<string, "every key set" | ReadonlyArray<KeySet>>>

export type OwaspItem = "API1" | "API2" | "API3" | "API4" | "API5" | "API8" | "API9"

/**
 * What the contract runner shares with the slices. The runner fills the fields in
 * its `beforeAll`: read them inside hooks and tests only, never while registering.
 */
export interface ContractContext {
  readonly target: ContractTarget
  /** An account with keys `leadsRead`, `leadsWrite`, `analytics`, `conversations` and `mixed` (leads:read + analytics:read). */
  readonly acme: AccountFixture
  /** A second account, with its owner key only. */
  readonly other: AccountFixture
  readonly options: SuiteOptions
}

/** What the OWASP runner shares with the slices; set in its `beforeAll`, like `ContractContext`. */
export interface SecurityContext extends Resource.Context {
  readonly target: Target
}
